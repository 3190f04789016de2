//! The headless commands return how they ended and tell what happens to an edge, instead of
//! printing and exiting: driven in-process against the simulator with a recording edge, their
//! answers are matched as values — the refusal that stops an action, a person declining, a
//! request refused before the fleet is read, an empty selection — with nothing sent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use fluxfleet::acting::ActFailed;
use fluxfleet::acting::act::{Acted, Order, act};
use fluxfleet::actions::Refused;
use fluxfleet::config::Mode;
use fluxfleet::export::Filter;
use fluxfleet::export::outcome::{Ended, Misuse, ReadFailed};
use fluxfleet::export::query::Query;
use fluxfleet::fleet::FluxKind;
use fluxfleet::fleet::verbs::Verb;
use fluxfleet::headless::{Confirm, Confirmed, Edge, Output, Said};
use fluxfleet::session::resolve::Sources;
use tokio_util::sync::CancellationToken;

/// An edge that keeps what it is told and answers a confirmation as set.
struct Recorder {
    said: Mutex<Vec<Said>>,
    asked: Mutex<Vec<Confirm>>,
    answer: Confirmed,
}

impl Recorder {
    fn answering(answer: Confirmed) -> Arc<Recorder> {
        Arc::new(Recorder {
            said: Mutex::new(Vec::new()),
            asked: Mutex::new(Vec::new()),
            answer,
        })
    }

    fn said(&self) -> Vec<Said> {
        self.said.lock().unwrap().clone()
    }
}

impl Edge for Recorder {
    fn said(&self, said: Said) {
        self.said.lock().unwrap().push(said);
    }

    fn shows_progress(&self) -> bool {
        false
    }

    fn confirm(&self, asked: &Confirm) -> Confirmed {
        self.asked.lock().unwrap().push(asked.clone());
        self.answer
    }
}

/// The simulator's fleet, and an empty config file (the defaults: read-only unless asked).
fn sources(sim: &common::Sim) -> Sources {
    let config = sim.dir.path().join("fluxfleet.toml");
    std::fs::write(&config, "").unwrap();
    Sources {
        kubeconfigs: vec![sim.handle.files.fleet.clone()],
        config: Some(config),
        command_line_only: true,
        ..Sources::default()
    }
}

fn get_request(sources: Sources, filter: Filter) -> Query {
    Query {
        sources,
        filter,
        every_kind: false,
        output: Output::Json,
        summary: false,
        root_causes: false,
        timeout: Duration::from_secs(60),
        watch: false,
        fail_on: None,
        since: None,
    }
}

fn suspend(sources: Sources, filter: Filter, mode: Option<Mode>) -> Order {
    Order {
        sources,
        action: fluxfleet::actions::Request {
            verb: Verb::Suspend,
            filter,
            all: false,
            reason: Some("outcome test".into()),
        },
        mode,
        dry_run: false,
        yes: false,
        timeout: Duration::from_secs(60),
        output: Output::Ndjson,
    }
}

fn patches(sim: &common::Sim) -> u64 {
    sim.handle.stats()["patchTotal"].as_u64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_answer_with_values_and_tell_the_edge_what_a_person_must_see() {
    let sim = common::start().await;
    let cluster = sim.handle.cluster_names()[0].clone();
    let on_one = Filter {
        clusters: vec![cluster.clone()],
        kind: Some(FluxKind::Kustomization),
        ..Filter::default()
    };

    // A read of the whole small fleet ends done, with nothing to tell.
    let edge = Recorder::answering(Confirmed::No);
    let ended = fluxfleet::export::get::get(
        get_request(sources(&sim), Filter::default()),
        edge.clone(),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(edge.said(), vec![], "a complete read tells nothing");
    assert!(matches!(ended, Ok(Ended::Done)), "{ended:?}");

    // A selection that matches nothing: told so, still done.
    let edge = Recorder::answering(Confirmed::No);
    let nothing = Filter {
        name: Some("no-such-object".into()),
        ..Filter::default()
    };
    let mut request = get_request(sources(&sim), nothing);
    request.output = Output::Table;
    let ended = fluxfleet::export::get::get(request, edge.clone(), CancellationToken::new()).await;
    assert!(matches!(ended, Ok(Ended::Done)), "{ended:?}");
    assert_eq!(edge.said(), vec![Said::NoObjects]);

    // A request the command does not take is refused before the fleet is read: a fleet that
    // does not exist is never looked for.
    let nowhere = Sources {
        kubeconfigs: vec![sim.dir.path().join("missing.yaml")],
        ..sources(&sim)
    };
    let rollout = fluxfleet::export::rollout::RolloutQuery {
        sources: nowhere,
        filter: Filter {
            kind: Some(FluxKind::Alert),
            ..Filter::default()
        },
        output: Output::Json,
        timeout: Duration::from_secs(5),
        metrics: None,
    };
    let edge = Recorder::answering(Confirmed::No);
    let ended = fluxfleet::export::rollout::rollout(rollout, edge.clone()).await;
    assert!(
        matches!(
            ended,
            Err(ReadFailed::Misuse(Misuse::NoRevisions(FluxKind::Alert)))
        ),
        "{ended:?}"
    );
    assert_eq!(edge.said(), vec![]);

    // Read-only (the default): the guardrail's variant, nothing sent.
    let before = patches(&sim);
    let edge = Recorder::answering(Confirmed::Yes);
    let acted = act(suspend(sources(&sim), on_one.clone(), None), edge.clone()).await;
    match acted {
        Err(ActFailed::Refused {
            refused: Refused::ReadOnly {
                verb: Verb::Suspend,
            },
            ..
        }) => {}
        other => panic!("read-only must refuse: {other:?}"),
    }

    // A scope naming no place is refused by the guardrail, whatever the mode.
    let unscoped = Filter {
        kind: Some(FluxKind::Kustomization),
        ..Filter::default()
    };
    let acted = act(
        suspend(sources(&sim), unscoped, Some(Mode::Write)),
        edge.clone(),
    )
    .await;
    match acted {
        Err(ActFailed::Refused {
            refused: Refused::Unscoped { .. },
            ..
        }) => {}
        other => panic!("an unscoped suspend must be refused: {other:?}"),
    }
    assert!(edge.asked.lock().unwrap().is_empty(), "nobody was asked");

    // A dry run plans and asks nobody.
    let mut dry = suspend(sources(&sim), on_one.clone(), None);
    dry.dry_run = true;
    let edge = Recorder::answering(Confirmed::Yes);
    let planned = match act(dry, edge.clone()).await {
        Ok(Acted::Planned { verb, tally, .. }) => {
            assert_eq!(verb, Verb::Suspend);
            tally
        }
        other => panic!("a dry run plans: {other:?}"),
    };
    assert!(planned.sent > 1, "several Kustomizations on {cluster}");
    assert!(edge.asked.lock().unwrap().is_empty());

    // With writes granted, more than one target asks the person; one who declines sends
    // nothing, and the question says how many and what to type.
    let edge = Recorder::answering(Confirmed::No);
    let acted = act(
        suspend(sources(&sim), on_one.clone(), Some(Mode::Write)),
        edge.clone(),
    )
    .await;
    assert!(matches!(acted, Err(ActFailed::NotConfirmed)), "{acted:?}");
    let asked = edge.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].what.contains(&planned.sent.to_string()),
        "{asked:?}"
    );
    // Without a terminal, the answer is to pass --yes: the same refusal as the command line's.
    let edge = Recorder::answering(Confirmed::NoTerminal);
    let acted = act(
        suspend(sources(&sim), on_one, Some(Mode::Write)),
        edge.clone(),
    )
    .await;
    match &acted {
        Err(failed @ ActFailed::NeedsYes { verb, .. }) => {
            assert_eq!(*verb, Verb::Suspend);
            assert!(failed.is_usage());
            assert!(failed.to_string().contains("pass --yes"), "{failed}");
        }
        other => panic!("no terminal: {other:?}"),
    }
    assert_eq!(patches(&sim), before, "nothing was sent");
}
