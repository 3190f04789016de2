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

/// One Event's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// CamelCase, as Kubernetes reasons are: `Suspended`, `ReconcileRequested` …
    pub reason: &'static str,
    pub message: String,
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
    pub identity: Option<&'a str>,
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
            message.push_str(&format!(" (as {identity})"));
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
        Notice {
            reason,
            message: bounded(message),
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
        let who = Who {
            user: "alice",
            host: "laptop",
            identity: Some("system:admin"),
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
                        .into()
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
