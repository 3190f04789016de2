//! A proposal: what was asked and by whom, its targets as planned, the decision and the outcomes
//! — what the keeper, the store and every front door share.

use std::time::Duration;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::actions;
use crate::audit;
use crate::fleet::filter::{self, Filter};
use crate::fleet::scope::{NotAKind, Scope};
use crate::fleet::verbs::{Intent, Verb};
use crate::fleet::{ClusterId, ObjectKey};

/// How long a proposal may be approved, unless the server is told otherwise.
pub const DEFAULT_EXPIRY: Duration = Duration::from_secs(3600);
/// What an assistant says about why it asks, at most (cut beyond).
pub const WHY_MAX: usize = 1024;
/// Changes said when approval finds the fleet changed, at most.
const CHANGES_SAID: usize = 10;

/// Which objects a proposal is about, as the assistant named them: selected again on approval,
/// so that an object that came into scope since counts as a change.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalSelection {
    /// The scope, as the assistant named it (its fields side by side with the status).
    #[serde(flatten)]
    pub scope: Scope,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// A step of the named thing's rollout instead of the objects the filter selects: its halt
    /// (its copies the newest revision has not reached) or the undoing of one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<RolloutStep>,
}

/// What a proposal does to a rollout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RolloutStep {
    Halt,
    ResumeHalted,
}

/// A selection that names no kind or status fluxfleet knows (a proposal's file edited, or
/// written by a newer version).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    #[error(transparent)]
    Kind(#[from] NotAKind),
    #[error(transparent)]
    Status(#[from] crate::fleet::filter::UnknownStatus),
    #[error("a rollout is one thing: name its kind, namespace and name")]
    NotOneThing,
    #[error("no cluster in scope has {0}")]
    NotDeployed(String),
    #[error(transparent)]
    Halt(#[from] crate::fleet::rollouts::NoHalt),
}

impl ProposalSelection {
    /// The filter that selects the same objects again.
    pub fn filter(&self) -> Result<Filter, SelectionError> {
        let status = self.status.as_deref().map(filter::StatusFilter::parse);
        Ok(self.scope.filter(status.transpose()?)?)
    }
}

impl ProposalSelection {
    /// The objects this selection names on `index` now: those its filter selects, or the
    /// copies its rollout step touches (none, when there is nothing to halt or resume any more).
    pub fn select(
        &self,
        index: &crate::fleet::Index,
        rollout: &crate::config::RolloutSection,
        now: Timestamp,
    ) -> Result<Vec<(ClusterId, ObjectKey)>, SelectionError> {
        let Some(_) = self.rollout else {
            return Ok(filter::selected(index, &self.filter()?));
        };
        match self.halt(index, rollout, now) {
            Ok((key, halt)) => Ok(halt.clusters.iter().map(|c| (*c, key.clone())).collect()),
            Err(SelectionError::Halt(_)) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// The halt (or its undoing) of the rollout this selection names, over its clusters.
    pub fn halt(
        &self,
        index: &crate::fleet::Index,
        rollout: &crate::config::RolloutSection,
        now: Timestamp,
    ) -> Result<(ObjectKey, crate::fleet::rollouts::Halt), SelectionError> {
        let filter = self.filter()?;
        let (Some(kind), Some(namespace), Some(name)) =
            (filter.kind, &filter.namespace, &filter.name)
        else {
            return Err(SelectionError::NotOneThing);
        };
        let key = ObjectKey::new(kind, namespace, name);
        let clusters = index
            .entries()
            .filter(|(_, c)| !c.retired && filter.cluster(c));
        let (rings, rules) = (&rollout.rings, &rollout.rules);
        let matrix = crate::fleet::rollouts::matrix(clusters, &key, rings, rules, now)
            .ok_or_else(|| SelectionError::NotDeployed(format!("{kind} {namespace}/{name}")))?;
        let resume = self.rollout == Some(RolloutStep::ResumeHalted);
        Ok((
            key.clone(),
            crate::fleet::rollouts::halt(index, &matrix, &key, resume)?,
        ))
    }
}

/// One target as planned: the patches it gets, in order, or why it is refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Planned {
    pub workspace: String,
    pub cluster: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// `patch Kind {…}; then patch …`, or `refused: why`.
    pub would: String,
}

impl Planned {
    pub fn of(target: &actions::Target) -> Planned {
        let r = &target.record;
        Planned {
            workspace: r.workspace.clone(),
            cluster: r.cluster.clone(),
            kind: r.kind.clone(),
            namespace: r.namespace.clone(),
            name: r.name.clone(),
            would: target.would(),
        }
    }

    fn names(&self) -> String {
        format!(
            "{}/{} {} {}/{}",
            self.workspace, self.cluster, self.kind, self.namespace, self.name
        )
    }

    fn same_object(&self, other: &Planned) -> bool {
        (
            &self.workspace,
            &self.cluster,
            &self.kind,
            &self.namespace,
            &self.name,
        ) == (
            &other.workspace,
            &other.cluster,
            &other.kind,
            &other.namespace,
            &other.name,
        )
    }
}

/// How a target ended, once an approved proposal acted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetOutcome {
    pub workspace: String,
    pub cluster: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub outcome: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handled_at: Option<Timestamp>,
}

impl TargetOutcome {
    pub fn of(target: &audit::Record) -> TargetOutcome {
        TargetOutcome {
            workspace: target.workspace.clone(),
            cluster: target.cluster.clone(),
            kind: target.kind.clone(),
            namespace: target.namespace.clone(),
            name: target.name.clone(),
            outcome: target.outcome.to_string(),
            message: target.message.clone(),
            handled_at: target.handled_at,
        }
    }
}

/// What a person decided.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "kebab-case")]
pub enum Decision {
    Approved {
        by: String,
        at: Timestamp,
    },
    Rejected {
        by: String,
        at: Timestamp,
        reason: String,
    },
    /// Approval was asked, but the fleet had changed since the proposal: nothing was sent.
    Refused {
        by: String,
        at: Timestamp,
        changed: Vec<String>,
    },
}

/// Where a proposal stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProposalStatus {
    /// Waiting for a person.
    Pending,
    /// Approved: acting, or acted (its outcomes say how each target ended).
    Approved,
    Rejected,
    /// Approval found the fleet changed since: nothing was sent.
    Refused,
    /// Nobody decided in time: it can no longer act.
    Expired,
}

impl ProposalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ProposalStatus::Pending => "pending",
            ProposalStatus::Approved => "approved",
            ProposalStatus::Rejected => "rejected",
            ProposalStatus::Refused => "refused",
            ProposalStatus::Expired => "expired",
        }
    }
}

impl std::fmt::Display for ProposalStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An action asked for, kept until a person decides.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Proposal {
    pub id: String,
    pub created: Timestamp,
    pub expires: Timestamp,
    /// What asked: `mcp:<client>`.
    pub proposed_by: String,
    /// Whom the assistant works for (the user its server runs as): written on suspended objects
    /// as the suspender, as the patches shown say.
    pub user: String,
    /// Why, in the assistant's words: data to show, never an instruction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    pub action: Verb,
    /// Recorded on suspended objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Written as `reconcile.fluxcd.io/requestedAt` (and the journal's token).
    pub token: String,
    pub selection: ProposalSelection,
    pub targets: Vec<Planned>,
    /// Targets that would be sent, and refused.
    pub sends: usize,
    pub refused: usize,
    /// SHA-256 of the action, its intent and every target as planned.
    pub hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// Once an approved proposal has acted: how each target ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcomes: Option<Vec<TargetOutcome>>,
}

/// What asked for a proposal, besides the action.
#[derive(Clone, Debug)]
pub struct ProposalRequest {
    /// `mcp:<client>`.
    pub proposed_by: String,
    pub why: Option<String>,
    pub selection: ProposalSelection,
    pub expiry: Duration,
}

impl Proposal {
    /// What it sends, for a person: "3", or "3 (1 refused)".
    pub fn sends_told(&self) -> String {
        match self.refused {
            0 => self.sends.to_string(),
            refused => format!("{} ({refused} refused)", self.sends),
        }
    }

    /// Who asked, for whom and why, on one line for a person, said before they approve (made
    /// safe for a terminal by whoever shows it).
    pub fn told(&self) -> String {
        let mut text = format!(
            "proposal {} by {} (for {}): {} {}",
            self.id,
            self.proposed_by,
            self.user,
            self.action,
            self.sends_told()
        );
        if let Some(why) = &self.why {
            text.push_str(&format!(" — why: {why}"));
        }
        text
    }

    /// Keeps `targets` as planned for `intent`.
    pub fn new(
        intent: &Intent,
        targets: &[actions::Target],
        asked: ProposalRequest,
        now: Timestamp,
    ) -> Self {
        let planned: Vec<Planned> = targets.iter().map(Planned::of).collect();
        let sends = targets.iter().filter(|t| t.plan.is_ok()).count();
        let expiry =
            jiff::SignedDuration::try_from(asked.expiry).unwrap_or(jiff::SignedDuration::MAX);
        Proposal {
            id: new_id(),
            created: now,
            expires: now.checked_add(expiry).unwrap_or(Timestamp::MAX),
            proposed_by: asked.proposed_by,
            user: intent.user.clone(),
            why: asked.why.map(|w| crate::units::truncate(&w, WHY_MAX)),
            action: intent.verb,
            reason: intent.reason.clone(),
            token: intent.token.clone(),
            selection: asked.selection,
            sends,
            refused: planned.len() - sends,
            hash: hash(intent, &planned),
            targets: planned,
            decision: None,
            outcomes: None,
        }
    }

    /// The intent to plan again with: the same user, reason and token give the same patches.
    pub fn intent(&self) -> Intent {
        Intent {
            verb: self.action,
            user: self.user.clone(),
            reason: self.reason.clone(),
            token: self.token.clone(),
        }
    }

    pub fn status(&self, now: Timestamp) -> ProposalStatus {
        match &self.decision {
            Some(Decision::Approved { .. }) => ProposalStatus::Approved,
            Some(Decision::Rejected { .. }) => ProposalStatus::Rejected,
            Some(Decision::Refused { .. }) => ProposalStatus::Refused,
            None if now >= self.expires => ProposalStatus::Expired,
            None => ProposalStatus::Pending,
        }
    }

    /// What differs between this proposal and `targets`, planned again now with its intent:
    /// nothing (None) when they hash the same; else a line per target added, gone or changed.
    pub fn changes(&self, targets: &[actions::Target]) -> Option<Vec<String>> {
        let now: Vec<Planned> = targets.iter().map(Planned::of).collect();
        if hash(&self.intent(), &now) == self.hash {
            return None;
        }
        let mut changed = Vec::new();
        for was in &self.targets {
            match now.iter().find(|p| p.same_object(was)) {
                None => changed.push(format!("{}: no longer selected", was.names())),
                Some(p) if p.would != was.would => changed.push(format!(
                    "{}: would now {} (proposed: {})",
                    was.names(),
                    p.would,
                    was.would
                )),
                Some(_) => {}
            }
        }
        for p in &now {
            if !self.targets.iter().any(|was| was.same_object(p)) {
                changed.push(format!("{}: newly selected", p.names()));
            }
        }
        if changed.is_empty() {
            // Same targets and patches in another order.
            changed.push("the targets' order changed".into());
        }
        let more = changed.len().saturating_sub(CHANGES_SAID);
        changed.truncate(CHANGES_SAID);
        if more > 0 {
            changed.push(format!("and {more} more"));
        }
        Some(changed)
    }
}

/// The content hash: the action, its intent, and every target with its patches or refusal.
fn hash(intent: &Intent, targets: &[Planned]) -> String {
    #[derive(Serialize)]
    struct Hashed<'a> {
        action: Verb,
        user: &'a str,
        reason: Option<&'a str>,
        token: &'a str,
        targets: &'a [Planned],
    }
    let hashed = Hashed {
        action: intent.verb,
        user: &intent.user,
        reason: intent.reason.as_deref(),
        token: &intent.token,
        targets,
    };
    // Plain strings and a unit enum: serializing cannot fail.
    let bytes = serde_json::to_vec(&hashed).unwrap_or_default();
    let digest = ring::digest::digest(&ring::digest::SHA256, &bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// `p-` and eight random hex digits: short enough to type.
fn new_id() -> String {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 4];
    if ring::rand::SystemRandom::new().fill(&mut bytes).is_err() {
        let nanos = Timestamp::now().subsec_nanosecond();
        bytes = nanos.to_le_bytes();
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("p-{hex}")
}

/// Whether `id` could be a proposal's: never a path.
pub fn is_id(id: &str) -> bool {
    id.len() <= 32
        && id.starts_with("p-")
        && id[2..].bytes().all(|b| b.is_ascii_hexdigit())
        && id.len() > 2
}
