//! The one guardrail: what refuses a whole action before anything is sent or proposed, the same
//! through every front door — keys, `suspend | resume | reconcile`, MCP `--write` and
//! `--propose`, `approve`. Each refusal is one variant with one message; a front door turns it
//! into its own answer (an exit code, an MCP error, a line on the screen), never into other
//! words. Targets refused one by one (a deny rule, a read-only or unreachable cluster) are the
//! planner's ([`super::plan::plan`]).

use crate::config;
use crate::fleet::filter::Filter;
use crate::fleet::verbs::{Intent, Verb};
use crate::fleet::{ClusterId, Index, ObjectKey};

use super::plan::{Guard, Target, plan};

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

impl Refused {
    /// Whether the request itself is to be changed (a scope, a flag, the mode, the config),
    /// rather than the fleet having nothing to act on.
    pub fn is_usage(&self) -> bool {
        !matches!(self, Refused::NoMatch)
    }
}

/// Refuses every write before the fleet is looked at: guardrails that cannot be read exactly
/// ([`crate::config::Config::writes_refused`]), then read-only mode (no grant).
pub fn may_write(writes_refused: Option<&str>, granted: bool, verb: Verb) -> Result<(), Refused> {
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
pub fn within_limits(count: usize, actions: &config::Actions) -> Result<(), Refused> {
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
        match self.all || self.filter.names_a_place() {
            true => Ok(()),
            false => Err(Refused::Unscoped { verb: self.verb }),
        }
    }

    /// The objects the request selects in `index`, refused when it names no place unless it says
    /// `all`.
    pub fn select(&self, index: &Index) -> Result<Vec<(ClusterId, ObjectKey)>, Refused> {
        self.scoped()?;
        Ok(crate::fleet::filter::selected(index, &self.filter))
    }
}

/// `objects` planned for `intent` ([`plan`]), refused whole when there is none or more than
/// `actions.max_targets`.
pub fn admit(
    index: &Index,
    objects: Vec<(ClusterId, ObjectKey)>,
    intent: &Intent,
    guard: &Guard<'_>,
) -> Result<Vec<Target>, Refused> {
    if objects.is_empty() {
        return Err(Refused::NoMatch);
    }
    within_limits(objects.len(), guard.actions)?;
    Ok(plan(index, objects, intent, guard))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_refused_unreadable_first_then_read_only() {
        let verb = Verb::Suspend;
        assert_eq!(
            may_write(Some("config.toml: line 3: bad"), true, verb),
            Err(Refused::Unreadable {
                verb,
                why: "config.toml: line 3: bad".into()
            })
        );
        assert_eq!(
            may_write(Some("bad"), false, verb).map_err(|r| r.to_string()),
            Err("nothing can suspend: bad".into())
        );
        assert_eq!(
            may_write(None, false, verb),
            Err(Refused::ReadOnly { verb })
        );
        assert_eq!(may_write(None, true, verb), Ok(()));
    }

    #[test]
    fn a_selection_naming_no_place_needs_all_and_kind_or_status_are_not_places() {
        let index = Index::default();
        let request = |filter: Filter, all: bool| Request {
            verb: Verb::Suspend,
            filter,
            all,
            reason: None,
        };
        let kind_only = Filter {
            kind: Some(crate::fleet::FluxKind::Kustomization),
            status: Some(crate::fleet::filter::StatusFilter::Failing),
            ..Filter::default()
        };
        assert_eq!(
            request(kind_only.clone(), false).select(&index),
            Err(Refused::Unscoped {
                verb: Verb::Suspend
            })
        );
        assert_eq!(request(kind_only.clone(), true).select(&index), Ok(vec![]));
        for placed in [
            Filter {
                workspace: Some("dev".into()),
                ..kind_only.clone()
            },
            Filter {
                clusters: vec!["*-dev-*".into()],
                ..kind_only.clone()
            },
            Filter {
                namespace: Some("apps".into()),
                ..kind_only.clone()
            },
            Filter {
                name: Some("apps".into()),
                ..kind_only.clone()
            },
        ] {
            assert_eq!(request(placed, false).select(&index), Ok(vec![]));
        }
    }

    #[test]
    fn none_or_too_many_targets_are_refused_whole() {
        let index = Index::default();
        let actions = config::Actions {
            concurrency: 8,
            confirm_above: 10,
            max_targets: 2,
            deny: vec![],
            events: true,
        };
        let guard = Guard {
            actions: &actions,
            permissions: None,
        };
        let intent = Intent {
            verb: Verb::Reconcile,
            user: "me".into(),
            reason: None,
            token: "t".into(),
        };
        assert_eq!(
            admit(&index, vec![], &intent, &guard),
            Err(Refused::NoMatch)
        );
        let key = ObjectKey::new(crate::fleet::FluxKind::Kustomization, "ns", "apps");
        let three = (0..3).map(|i| (ClusterId(i), key.clone())).collect();
        let refused = admit(&index, three, &intent, &guard);
        assert_eq!(refused, Err(Refused::TooMany { count: 3, max: 2 }));
        assert_eq!(
            refused.map_err(|r| r.to_string()),
            Err("3 objects match, more than the 2 allowed at once (actions.max_targets): narrow the scope".into())
        );
        assert!(within_limits(2, &actions).is_ok());
    }
}
