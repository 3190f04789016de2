//! A job and its targets, planned: what may refuse a target, the planner, what a dry run counts,
//! and how a job is to be carried out — what the guardrail, the executor and every front door
//! share.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::audit;
use crate::config::{self, Permissions};
use crate::fleet::notice::{Identity, Notice, Who};
use crate::fleet::verbs::{self as flux, Intent, Refusal, Step, Verb};
use crate::fleet::{ClusterId, ClusterInfo, Index, ObjectKey};
use crate::session::{READ_ONLY_CLUSTER, Writer};

/// What may refuse a target.
pub(super) struct Guard<'a> {
    pub actions: &'a config::Actions,
    /// Which clusters are writable; None for a dry run in read-only mode, which shows what
    /// would be sent with writes enabled.
    pub permissions: Option<&'a Permissions>,
}

/// Plans each of `objects` into a target: refused by a deny rule, then by its cluster's mode,
/// then because nothing of the user's reaches its cluster, then because the object is gone;
/// else the patches [`flux::plan`] decides. The order of `objects` is kept. A dry run prints
/// these verdicts, and the run sends exactly the targets planned to be sent.
pub(super) fn plan(
    index: &Index,
    objects: impl IntoIterator<Item = (ClusterId, ObjectKey)>,
    intent: &Intent,
    guard: &Guard<'_>,
) -> Vec<Target> {
    let mut targets = Vec::new();
    for (cluster, key) in objects {
        // Ids come from this index: an unknown one cannot happen.
        let Some(entry) = index.cluster(cluster) else {
            continue;
        };
        let read_only = guard.permissions.is_some_and(|p| !p.writable(&entry.info));
        let plan = if let Some(why) = guard.actions.denied(&entry.info, &key) {
            Err(Refusal::Denied(why))
        } else if read_only {
            Err(Refusal::Denied(READ_ONLY_CLUSTER.into()))
        } else if let Some(why) = &entry.info.unreachable {
            Err(Refusal::Unreachable(why.to_string()))
        } else if let Some(summary) = entry.objects.get(&key) {
            flux::plan(intent, summary, |k| entry.objects.get(k))
        } else {
            Err(Refusal::NotSupported(
                "the object is no longer on the cluster, or the cluster is not watched".into(),
            ))
        };
        let checks = guard.actions.checks_flux_verbs(&entry.info);
        targets.push(Target {
            flux_verb: checks.then(|| intent.verb.flux_rbac()),
            record: audit::Record::new(&entry.info, &key),
            info: entry.info.clone(),
            cluster,
            key,
            plan,
        });
    }
    targets
}

/// What a planned action would do: the targets it would send, on how many clusters, and the
/// targets refused — counted apart, so that a dry run or a confirmation never calls a refused
/// target one that would change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    pub sent: usize,
    pub clusters: usize,
    pub refused: usize,
}

impl Tally {
    pub fn of(targets: &[Target]) -> Tally {
        let clusters: std::collections::BTreeSet<ClusterId> = targets
            .iter()
            .filter(|t| t.plan.is_ok())
            .map(|t| t.cluster)
            .collect();
        let sent = targets.iter().filter(|t| t.plan.is_ok()).count();
        Tally {
            sent,
            clusters: clusters.len(),
            refused: targets.len() - sent,
        }
    }

    /// "suspend 9 objects on 3 clusters, 3 refused", "nothing to suspend: all 4 refused".
    pub fn describe(&self, verb: Verb) -> String {
        use crate::units::count;
        if self.sent == 0 {
            return format!(
                "nothing to {verb}: {} refused",
                if self.refused == 1 {
                    "the object is".to_string()
                } else {
                    format!("all {} objects are", self.refused)
                }
            );
        }
        let mut text = format!(
            "{verb} {} on {}",
            count(self.sent, "object", "objects"),
            count(self.clusters, "cluster", "clusters")
        );
        if self.refused > 0 {
            text.push_str(&format!(", {} refused", self.refused));
        }
        text
    }
}

/// An action to send: every target with its patches, or why it is refused. Only what the one
/// door admitted becomes one ([`super::Admitted::into_job`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// Tells this job's outcomes from an earlier one's.
    pub(super) run: u64,
    pub(super) intent: Intent,
    pub(super) targets: Vec<Target>,
    /// The proposal this job carries out, journaled with its proposer and approver.
    pub(super) proposal: Option<audit::Proposed>,
}

impl Job {
    pub fn run(&self) -> u64 {
        self.run
    }

    pub fn intent(&self) -> &Intent {
        &self.intent
    }

    pub fn targets(&self) -> &[Target] {
        &self.targets
    }

    pub fn proposal(&self) -> Option<&audit::Proposed> {
        self.proposal.as_ref()
    }

    /// The Event this job leaves on a target it changed, sent as `identity` through `tool`.
    pub fn notice(&self, identity: Option<&Identity>, tool: Option<&str>) -> Notice {
        let intent = &self.intent;
        let host = audit::local_host();
        let who = Who {
            user: &intent.user,
            host: &host,
            identity,
            tool,
            proposal: self.proposal.as_ref().map(|p| {
                (
                    p.id.as_str(),
                    p.proposed_by.as_str(),
                    p.approved_by.as_str(),
                )
            }),
            why: intent.reason.as_deref(),
        };
        Notice::of(intent.verb, &who)
    }
}

/// One object of a job.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    pub cluster: ClusterId,
    /// Where the cluster comes from and how it is guarded.
    pub info: Arc<ClusterInfo>,
    pub key: ObjectKey,
    /// What the journal will say about it; the outcome is filled in when it ends.
    pub record: audit::Record,
    pub plan: Result<Vec<Step>, Refusal>,
    /// Flux's verb its cluster is asked about before anything is sent (`[actions] flux_verbs =
    /// "check"`), for every object its patches touch.
    pub flux_verb: Option<&'static str>,
}

impl Target {
    /// What a dry run says this target would get: its patches in order, or why it is refused.
    pub fn would(&self) -> String {
        match &self.plan {
            Ok(steps) => steps
                .iter()
                .map(|s| format!("patch {} {}", s.key.kind, s.patch))
                .collect::<Vec<_>>()
                .join("; then "),
            Err(refusal) => format!("refused: {refusal}"),
        }
    }
}

/// How to carry a job out.
pub struct Carry<'a> {
    /// None in read-only mode: every target is refused.
    pub writer: Option<&'a Writer>,
    /// Wait this long for each reconcile to be handled before calling it done (None: done when
    /// the patch is accepted; the TUI follows the rest in the watch).
    pub wait: Option<Duration>,
    pub concurrency: usize,
    pub journal: Option<&'a Path>,
    /// What the user acted through, when not fluxfleet's own commands (`mcp:<client>`);
    /// journaled as `tool`.
    pub tool: Option<&'a str>,
    /// Record a Kubernetes Event on each target changed (`[actions] events`).
    pub events: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tally's words for every count: what the dry run and the confirmation say.
    #[test]
    fn the_tally_says_every_count() {
        let tally = |sent, clusters, refused| Tally {
            sent,
            clusters,
            refused,
        };
        let said = |t: Tally| t.describe(Verb::Suspend);
        assert_eq!(said(tally(1, 1, 0)), "suspend 1 object on 1 cluster");
        assert_eq!(said(tally(9, 3, 0)), "suspend 9 objects on 3 clusters");
        assert_eq!(
            said(tally(9, 3, 1)),
            "suspend 9 objects on 3 clusters, 1 refused"
        );
        assert_eq!(
            said(tally(9, 3, 3)),
            "suspend 9 objects on 3 clusters, 3 refused"
        );
        assert_eq!(
            said(tally(0, 0, 1)),
            "nothing to suspend: the object is refused"
        );
        assert_eq!(
            said(tally(0, 0, 4)),
            "nothing to suspend: all 4 objects are refused"
        );
        assert_eq!(
            tally(2, 1, 0).describe(Verb::Reconcile),
            "reconcile 2 objects on 1 cluster"
        );
    }
}
