//! What an action tells the team on the object it changed: a Kubernetes Event (type Normal) whose
//! reason names the action and whose message says who did it — the local user, the identity the
//! cluster saw, through which tool, for which proposal — and why. `kubectl describe`, `kubectl
//! get events` and `flux events` show it beside the controllers' own events, as they show the
//! Flux Operator's web UI actions.

use super::verbs::Verb;

/// The component events are reported by (`source.component`, `reportingComponent`).
pub const COMPONENT: &str = "fluxfleet";

/// The most of a message an API server keeps readable (events.k8s.io's note limit, 1 KiB).
pub const MESSAGE_BYTES: usize = 1024;

/// Flux's audit annotations on an action's Event, as the Flux web UI writes them: the action
/// (`reconcile`, `suspend`, `resume`), and the identity the request ran as.
pub const ACTION: &str = "event.toolkit.fluxcd.io/action";
pub const USERNAME: &str = "event.toolkit.fluxcd.io/username";
pub const GROUPS: &str = "event.toolkit.fluxcd.io/groups";

/// One Event's words, and Flux's audit annotations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// CamelCase, as Kubernetes reasons are: `Suspended`, `ReconcileRequested` …
    pub reason: &'static str,
    pub message: String,
    /// ([`ACTION`], …), ([`USERNAME`], …), ([`GROUPS`], comma-separated).
    pub annotations: [(&'static str, String); 3],
}

/// Who a cluster authenticated our requests as (its `SelfSubjectReview`, what `kubectl auth
/// whoami` shows): a server's words, bounded when read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Identity {
    pub username: String,
    pub groups: Vec<String>,
}

/// Why an action's Event was not recorded (the action itself was done).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotRecorded {
    /// The cluster refuses this user creating Events: RBAC to grant, or `[actions] events =
    /// false`.
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// The Event was not accepted, or not in time.
    #[error("{0}")]
    Failed(String),
    /// Where this cluster's state comes from, Events cannot be written.
    #[error("this source cannot record events")]
    Unsupported,
}

/// Who acted, and why.
#[derive(Clone, Copy, Debug, Default)]
pub struct Who<'a> {
    /// The local user.
    pub user: &'a str,
    /// The machine fluxfleet ran on.
    pub host: &'a str,
    /// Who the cluster authenticated the request as, where it said.
    pub identity: Option<&'a Identity>,
    /// The tool it came through, when not fluxfleet's own commands (`mcp:<client>`).
    pub tool: Option<&'a str>,
    /// The proposal it carries out: its id, what proposed it, who approved it.
    pub proposal: Option<(&'a str, &'a str, &'a str)>,
    /// Why, as the user said it.
    pub why: Option<&'a str>,
}

impl Notice {
    /// The Event `verb` leaves on its target, done by `who`.
    pub fn of(verb: Verb, who: &Who<'_>) -> Notice {
        let (reason, done) = match verb {
            Verb::Suspend => ("Suspended", "suspended"),
            Verb::Resume => ("Resumed", "resumed, reconcile requested,"),
            Verb::Reconcile => ("ReconcileRequested", "reconcile requested"),
            Verb::ReconcileWithSource => {
                ("ReconcileRequested", "reconcile with its source requested")
            }
            Verb::Force => ("ForceRequested", "forced install or upgrade requested"),
            Verb::Reset => ("ResetRequested", "reset of the failure counters requested"),
        };
        let mut message = format!("{done} by {}", who.user);
        if !who.host.is_empty() {
            message.push_str(&format!("@{}", who.host));
        }
        if let Some(identity) = who.identity {
            message.push_str(&format!(" (as {})", identity.username));
        }
        message.push_str(&format!(" with {COMPONENT}"));
        if let Some(tool) = who.tool {
            message.push_str(&format!(" through {tool}"));
        }
        if let Some((id, proposed_by, approved_by)) = who.proposal {
            message.push_str(&format!(
                ", proposal {id} from {proposed_by} approved by {approved_by}"
            ));
        }
        if let Some(why) = who.why.filter(|w| !w.is_empty()) {
            message.push_str(&format!(": {why}"));
        }
        // The identity the request ran as; where the cluster did not say, the local user.
        let (username, groups) = match who.identity {
            Some(identity) => (identity.username.clone(), identity.groups.join(", ")),
            None => (who.user.to_string(), String::new()),
        };
        Notice {
            reason,
            message: bounded(message),
            annotations: [
                (ACTION, verb.flux_rbac().to_string()),
                (USERNAME, bounded(username)),
                (GROUPS, bounded(groups)),
            ],
        }
    }
}

/// `text` within [`MESSAGE_BYTES`], cut on a character's boundary, with its controls dropped.
fn bounded(text: String) -> String {
    let mut text: String = text.chars().filter(|c| !c.is_control()).collect();
    if text.len() > MESSAGE_BYTES {
        let mut end = MESSAGE_BYTES - '…'.len_utf8();
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_says_who_through_what_for_which_proposal_and_why() {
        let admin = Identity {
            username: "system:admin".into(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
        };
        let who = Who {
            user: "alice",
            host: "laptop",
            identity: Some(&admin),
            tool: None,
            proposal: None,
            why: Some("freeze for INC-42"),
        };
        assert_eq!(
            Notice::of(Verb::Suspend, &who),
            Notice {
                reason: "Suspended",
                message:
                    "suspended by alice@laptop (as system:admin) with fluxfleet: freeze for INC-42"
                        .into(),
                annotations: [
                    (ACTION, "suspend".into()),
                    (USERNAME, "system:admin".into()),
                    (GROUPS, "system:masters, system:authenticated".into()),
                ],
            }
        );
        let who = Who {
            user: "bob",
            host: "ws",
            identity: None,
            tool: Some("mcp:claude-code"),
            proposal: Some(("p-6b1f09a2", "mcp:claude-code", "bob")),
            why: None,
        };
        let notice = Notice::of(Verb::ReconcileWithSource, &who);
        assert_eq!(notice.reason, "ReconcileRequested");
        // Where the cluster did not say who it saw, the local user; Flux's verb for it.
        assert_eq!(
            notice.annotations,
            [
                (ACTION, "reconcile".into()),
                (USERNAME, "bob".into()),
                (GROUPS, String::new())
            ]
        );
        assert_eq!(
            notice.message,
            "reconcile with its source requested by bob@ws with fluxfleet through mcp:claude-code, \
             proposal p-6b1f09a2 from mcp:claude-code approved by bob"
        );
        for (verb, reason) in [
            (Verb::Resume, "Resumed"),
            (Verb::Reconcile, "ReconcileRequested"),
            (Verb::Force, "ForceRequested"),
            (Verb::Reset, "ResetRequested"),
        ] {
            assert_eq!(Notice::of(verb, &who).reason, reason);
        }
    }

    #[test]
    fn a_long_or_hostile_reason_stays_within_a_kilobyte_and_one_line() {
        let why = format!("{}\u{1b}[31m\n{}", "é".repeat(600), "x".repeat(600));
        let who = Who {
            user: "alice",
            why: Some(&why),
            ..Who::default()
        };
        let message = Notice::of(Verb::Suspend, &who).message;
        assert!(message.len() <= MESSAGE_BYTES, "{}", message.len());
        assert!(message.ends_with('…'));
        assert!(!message.chars().any(char::is_control), "{message:?}");
    }
}
