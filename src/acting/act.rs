//! `fluxfleet suspend | resume | reconcile [KIND] [NAME]`: the actions without a terminal, with
//! the selectors of `get`, on the same engine, and into the same audit journal as the TUI.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;

use super::failed::ActFailed;
use super::send::{Asking, Sending, Sent, confirmed, send_job, watch_kinds, write_targets};
use crate::actions::{Purpose, Refused, Rules, Tally, Unsent};
use crate::audit;
use crate::config::Mode;
use crate::fleet::Index;
use crate::fleet::verbs::Verb;
use crate::headless::Output;
use crate::headless::opening::fleet;
use crate::headless::{Edge, Said};
use crate::session::Session;
use crate::session::resolve::Sources;

/// What was asked.
#[derive(Clone, Debug)]
pub struct Order {
    pub sources: Sources,
    /// The action, as every front door asks it.
    pub action: crate::actions::Request,
    /// `--write` / `--read-only` over the config's mode.
    pub mode: Option<Mode>,
    pub dry_run: bool,
    pub yes: bool,
    /// For the fleet to answer, and for each reconcile to be handled.
    pub timeout: Duration,
    /// `table`: the per-target table at the end (and a live progress line on a terminal);
    /// `ndjson`: each target's outcome as one JSON line as it ends.
    pub output: Output,
}

/// What `act` did: planned only (`--dry-run`), or sent.
#[derive(Debug)]
pub enum Acted {
    /// `--dry-run`: the targets were written; nothing was sent.
    Planned {
        user: String,
        verb: Verb,
        tally: Tally,
    },
    Sent(Sent),
}

/// `fluxfleet suspend | resume | reconcile`.
pub async fn act(request: Order, edge: Arc<dyn Edge>) -> Result<Acted, ActFailed> {
    let opened = fleet(&request.sources, edge.as_ref()).await?;
    let mut config = opened.config;
    let infos = opened.fleet.clusters();
    let (grant, permissions) = config.writable(request.mode, &infos);
    let writes_refused = config.writes_refused();
    let action = &request.action;
    watch_kinds(&mut config, action.filter.kind, action.verb);
    let ask = action.ask(audit::local_user(), Timestamp::now().to_string());
    let purpose = match request.dry_run {
        true => Purpose::Preview,
        false => Purpose::Send {
            granted: grant.is_some(),
        },
    };
    // The door asked once before any cluster is: only whether anything matches can change
    // once the fleet is read.
    let rules = Rules {
        writes_refused: writes_refused.as_deref(),
        purpose,
        actions: &config.actions,
        // A dry run in read-only mode shows what would be sent with writes enabled.
        permissions: grant.is_some().then_some(&permissions),
    };
    match crate::actions::admit(&Index::default(), ask.clone(), &rules) {
        Err(refused) if refused != Refused::NoMatch => {
            let then = Unsent::Nothing {
                dry_run: !request.dry_run,
            };
            return Err(ActFailed::Refused { refused, then });
        }
        _ => {}
    }
    let mut live = Session::start(opened.fleet.sources(&config.engine, false));
    if !live.settle(request.timeout).await {
        edge.said(Said::Warning(
            "not every cluster answered within the timeout; acting on those that did".into(),
        ));
    }
    let admitted =
        crate::actions::admit(&live.index, ask, &rules).map_err(|refused| ActFailed::Refused {
            refused,
            then: Unsent::Nothing { dry_run: false },
        });
    let confirmed = admitted.and_then(|admitted| {
        let tally = admitted.tally();
        if request.dry_run {
            return Ok(admitted);
        }
        let asking = Asking {
            yes: request.yes,
            verb: action.verb,
            confirmation: admitted.confirmation(),
            even_one: false,
        };
        confirmed(&asking, tally, edge.as_ref()).map(|()| admitted)
    });
    let admitted = match confirmed {
        Ok(admitted) => admitted,
        Err(failed) => {
            live.shutdown().await;
            return Err(failed);
        }
    };
    let tally = admitted.tally();
    let grant = match (request.dry_run, grant) {
        (false, Some(grant)) => grant,
        // A dry run, or (never: refused above) a write without a grant.
        _ => {
            live.shutdown().await;
            write_targets(admitted.targets(), &mut io::stdout())?;
            let intent = admitted.intent();
            return Ok(Acted::Planned {
                user: intent.user.clone(),
                verb: intent.verb,
                tally,
            });
        }
    };
    let sending = Sending::of(&config.actions, request.timeout, request.output);
    let job = admitted
        .into_job(1, None)
        .map_err(|refused| ActFailed::Refused {
            refused,
            then: Unsent::Nothing { dry_run: false },
        })?;
    let sent = send_job(job, live, (grant, permissions), tally, (sending, edge)).await;
    Ok(Acted::Sent(sent))
}
