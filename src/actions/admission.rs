//! The one door: every front door — the TUI's keys and its approval of a proposal, `suspend |
//! resume | reconcile | halt`, `approve`, MCP `--write` and `--propose`, a plugin that writes —
//! hands what it was asked to [`admit`], which applies every check in one order and returns the
//! targets admitted and those refused ([`Admitted`]); the executor
//! ([`super::carry_out`]) accepts only a [`Job`] made from what [`admit`] returned. In order:
//!
//! 1. the guardrails can be read exactly, and writes were granted ([`Refused::Unreadable`],
//!    [`Refused::ReadOnly`]) — a dry run or a proposal skips this: it sends nothing;
//! 2. the scope names a place, or says all ([`Refused::Unscoped`]);
//! 3. something matches ([`Refused::NoMatch`]), and no more than `actions.max_targets`
//!    ([`Refused::TooMany`]);
//! 4. each target: a deny rule, its cluster's mode, its cluster reachable, the object there and
//!    the verb meaningful for it (suspended, its source suspended) ([`super::plan`]);
//! 5. how it is confirmed: above `actions.confirm_above`, by typing the count ([`Confirmation`]);
//! 6. on the cluster, before the first patch: Flux's own verbs (`[actions] flux_verbs`), asked
//!    as the Flux web UI asks them ([`super::access`]); the cluster's RBAC then answers each patch.
//!
//! Each refusal is one variant with one message; a front door turns it into its own answer (an
//! exit code, an MCP error, a line on the screen), never into other words.

use crate::audit;
use crate::config::{self, Permissions};
use crate::fleet::filter::Filter;
use crate::fleet::verbs::{Intent, Refusal, Verb};
use crate::fleet::{ClusterId, ClusterInfo, Index, ObjectKey};
use crate::session::READ_ONLY_CLUSTER;

use super::plan::{Guard, Job, Tally, Target, plan};

/// Why a whole action is refused: nothing of it is sent, and nothing is proposed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The guardrails could not be read exactly: writes are impossible until they are fixed.
    #[error("nothing can {verb}: {why}")]
    Unreadable { verb: Verb, why: String },
    /// Read-only: no write was granted.
    #[error(
        "read-only: nothing can {verb} — start with --write, or set mode = \"write\" in [ui] of the config"
    )]
    ReadOnly { verb: Verb },
    /// The request names no place — no workspace, cluster, namespace or name — and does not say
    /// it means the whole fleet.
    #[error(
        "the scope names no workspace, cluster, namespace or name, so it is the whole fleet: say all (--all, or all: true) to {verb} across it"
    )]
    Unscoped { verb: Verb },
    /// Nothing in the fleet matches.
    #[error("no Flux object matches")]
    NoMatch,
    /// More targets than one action may touch.
    #[error(
        "{count} objects match, more than the {max} allowed at once (actions.max_targets): narrow the scope"
    )]
    TooMany { count: usize, max: usize },
}

/// What became of an action the one door refused: what a front door says after the refusal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unsent {
    /// Nothing was sent; `dry_run` says a dry run would show the targets.
    Nothing { dry_run: bool },
    /// The proposal stays pending.
    Pending(String),
}

impl std::fmt::Display for Unsent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsent::Nothing { dry_run: false } => write!(f, "nothing was sent"),
            Unsent::Nothing { dry_run: true } => {
                write!(f, "nothing was sent (--dry-run shows the targets)")
            }
            Unsent::Pending(id) => write!(f, "proposal {id} stays pending"),
        }
    }
}

impl Refused {
    /// Whether the request itself is to be changed (a scope, a flag, the mode, the config),
    /// rather than the fleet having nothing to act on.
    pub fn is_usage(&self) -> bool {
        !matches!(self, Refused::NoMatch)
    }
}

/// Refuses every write before the fleet is looked at: guardrails that cannot be read exactly
/// ([`crate::config::Config::writes_refused`]), then read-only mode (no grant).
fn may_write(writes_refused: Option<&str>, granted: bool, verb: Verb) -> Result<(), Refused> {
    if let Some(why) = writes_refused {
        return Err(Refused::Unreadable {
            verb,
            why: why.to_string(),
        });
    }
    match granted {
        true => Ok(()),
        false => Err(Refused::ReadOnly { verb }),
    }
}

/// Refuses more than `actions.max_targets` targets at once.
fn within_limits(count: usize, actions: &config::Actions) -> Result<(), Refused> {
    let max = actions.max_targets;
    match count > max {
        true => Err(Refused::TooMany { count, max }),
        false => Ok(()),
    }
}

/// An action asked through a selection: what the headless commands, MCP and a proposal's
/// approval build from their own input.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub verb: Verb,
    /// Which objects, on which clusters.
    pub filter: Filter,
    /// The whole fleet is meant: a selection that names no place is refused without it.
    pub all: bool,
    /// Why (suspend): recorded on each object and in the journal.
    pub reason: Option<String>,
}

impl Request {
    /// What is sent, by `user`, with `token` as its `requestedAt` and journal token.
    pub fn intent(&self, user: String, token: String) -> Intent {
        Intent {
            verb: self.verb,
            user,
            reason: self.reason.clone(),
            token,
        }
    }

    /// Refused when it names no place unless it says `all`: known before the fleet is opened.
    pub fn scoped(&self) -> Result<(), Refused> {
        scoped(self.verb, &self.filter, self.all)
    }

    /// What a front door hands to [`admit`]: this selection, sent by `user` with `token`.
    pub fn ask(&self, user: String, token: String) -> Ask {
        Ask {
            intent: self.intent(user, token),
            objects: Objects::Selected {
                filter: self.filter.clone(),
                all: self.all,
            },
        }
    }
}

/// A selection naming no place is refused unless it says all.
fn scoped(verb: Verb, filter: &Filter, all: bool) -> Result<(), Refused> {
    match all || filter.names_a_place() {
        true => Ok(()),
        false => Err(Refused::Unscoped { verb }),
    }
}

/// What a front door asks: who acts and how ([`Intent`]), on what.
#[derive(Clone, Debug, PartialEq)]
pub struct Ask {
    pub intent: Intent,
    pub objects: Objects,
}

/// The objects asked for.
#[derive(Clone, Debug, PartialEq)]
pub enum Objects {
    /// A selection (`suspend | resume | reconcile`, MCP): refused when it names no place unless
    /// it says all.
    Selected { filter: Filter, all: bool },
    /// Objects a person or a proposal named one by one (the TUI's selection and marks, a
    /// halt's copies, a proposal's selection as the fleet is now).
    Named(Vec<(ClusterId, ObjectKey)>),
}

/// What the admission is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// To be sent: writes must have been granted.
    Send { granted: bool },
    /// To be shown (a dry run) or kept for a person to decide (a proposal): nothing is sent, so
    /// the session's mode does not refuse it; what it admits can never become a [`Job`].
    Preview,
}

/// The rules of the session a front door asks in.
#[derive(Clone, Copy)]
pub struct Rules<'a> {
    /// Why the guardrails cannot be read exactly ([`crate::config::Config::writes_refused`]).
    pub writes_refused: Option<&'a str>,
    pub purpose: Purpose,
    pub actions: &'a config::Actions,
    /// Which clusters are writable; None plans as if every cluster were (a proposal, a dry run
    /// in read-only mode, which shows what would be sent with writes enabled).
    pub permissions: Option<&'a Permissions>,
}

/// How a person confirms what was admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confirmation {
    /// `y` (or `--yes`).
    Yes,
    /// Above `actions.confirm_above`: the number of objects to change, typed.
    Count,
}

/// What [`admit`] let through: every target planned (its patches, or why it is refused), and
/// how it is to be confirmed. Only [`admit`] makes one.
#[derive(Clone, Debug, PartialEq)]
pub struct Admitted {
    intent: Intent,
    targets: Vec<Target>,
    confirmation: Confirmation,
    sendable: bool,
}

impl Admitted {
    pub fn intent(&self) -> &Intent {
        &self.intent
    }

    /// In the order asked.
    pub fn targets(&self) -> &[Target] {
        &self.targets
    }

    pub fn tally(&self) -> Tally {
        Tally::of(&self.targets)
    }

    pub fn confirmation(&self) -> Confirmation {
        self.confirmation
    }

    /// The first target's refusal, when nothing would be sent: what a person is told.
    pub fn first_refusal(&self) -> Option<&Refusal> {
        self.targets.iter().find_map(|t| t.plan.as_ref().err())
    }

    /// When nothing would be sent, what every door says: the tally and the first refusal's
    /// words ("nothing to reconcile: the object is refused (denied by actions.deny[0] …)").
    pub fn nothing_sent(&self) -> Option<String> {
        let tally = self.tally();
        if tally.sent > 0 {
            return None;
        }
        let why = self
            .first_refusal()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        Some(format!("{}{why}", tally.describe(self.intent.verb)))
    }

    /// The job that carries it out as run `run` (for `proposal`, when it approves one); a
    /// preview is refused as read-only: it was never admitted to be sent.
    pub fn into_job(self, run: u64, proposal: Option<audit::Proposed>) -> Result<Job, Refused> {
        if !self.sendable {
            let verb = self.intent.verb;
            return Err(Refused::ReadOnly { verb });
        }
        Ok(Job {
            run,
            intent: self.intent,
            targets: self.targets,
            proposal,
        })
    }
}

/// The one door: `ask` checked against `rules` on `index`, in the order of this module's
/// comment. A whole refusal sends (and proposes) nothing; what is admitted may still refuse
/// targets one by one, each with its reason.
pub fn admit(index: &Index, ask: Ask, rules: &Rules<'_>) -> Result<Admitted, Refused> {
    let verb = ask.intent.verb;
    let sendable = match rules.purpose {
        Purpose::Send { granted } => {
            may_write(rules.writes_refused, granted, verb)?;
            true
        }
        Purpose::Preview => false,
    };
    let objects = match ask.objects {
        Objects::Selected { filter, all } => {
            scoped(verb, &filter, all)?;
            crate::fleet::filter::selected(index, &filter)
        }
        Objects::Named(objects) => objects,
    };
    if objects.is_empty() {
        return Err(Refused::NoMatch);
    }
    within_limits(objects.len(), rules.actions)?;
    let guard = Guard {
        actions: rules.actions,
        permissions: rules.permissions,
    };
    let targets = plan(index, objects, &ask.intent, &guard);
    let sent = Tally::of(&targets).sent;
    let confirmation = match sent > rules.actions.confirm_above {
        true => Confirmation::Count,
        false => Confirmation::Yes,
    };
    Ok(Admitted {
        intent: ask.intent,
        targets,
        confirmation,
        sendable,
    })
}

/// Why a program that writes (a plugin) may not run on `cluster` (on `object`, when one is
/// selected): the checks [`admit`] applies to the whole and then to a target, in its order and
/// words — the guardrails and the grant, a deny rule, the cluster's mode.
pub fn may_run_writer(
    rules: &Rules<'_>,
    verb: Verb,
    cluster: Option<&ClusterInfo>,
    object: Option<&ObjectKey>,
) -> Result<(), Result<Refused, Refusal>> {
    if let Purpose::Send { granted } = rules.purpose {
        may_write(rules.writes_refused, granted, verb).map_err(Ok)?;
    }
    let Some(info) = cluster else {
        return Ok(());
    };
    let denied = match object {
        Some(key) => rules.actions.denied(info, key),
        None => rules.actions.denied_cluster(info),
    };
    if let Some(why) = denied {
        return Err(Err(Refusal::Denied(why)));
    }
    if rules.permissions.is_some_and(|p| !p.writable(info)) {
        return Err(Err(Refusal::Denied(READ_ONLY_CLUSTER.into())));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
