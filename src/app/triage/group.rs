//! A triage group: what its members share, and what its row says.

use crate::fleet::SharedText;

use jiff::Timestamp;

use crate::app::view::RowId;
use crate::fleet::graph::Holds;
use crate::fleet::incident::Shared;
use crate::fleet::suspect::Suspect;
use crate::fleet::{FluxKind, Health, ObjectKey, Phase};

/// What the members of a triage group share.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub what: GroupOf,
    /// Objects (a root cause: the roots themselves) or clusters.
    pub members: Vec<RowId>,
    pub workspaces: usize,
    /// Since when its oldest member is not ready (or cannot be watched).
    pub since: Option<Timestamp>,
    /// Members that turned not ready within the last hour.
    pub recent: usize,
    /// What its members hold back (root causes only).
    pub holds: Holds,
    /// The change its failing copies came by before failing (an object's group), with the
    /// evidence.
    pub suspect: Option<Suspect>,
    /// The incident it stands under, when its endpoint's failure is shared.
    pub incident: Option<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum GroupOf {
    /// The same object failing the same way on several clusters.
    Object {
        kind: FluxKind,
        namespace: SharedText,
        name: SharedText,
        health: Health,
        reason: Option<SharedText>,
        message: Option<SharedText>,
    },
    /// The same `dependsOn` cycle on several clusters: its objects, in order. Reported, never
    /// followed; a member is the cycle's first object on one cluster.
    Cycle { objects: Vec<ObjectKey> },
    /// Clusters that cannot be watched, for the same reason.
    Connection {
        phase: Phase,
        error: Option<Box<str>>,
    },
    /// Root causes whose messages say one endpoint fails one way: its members are their groups.
    Incident {
        shared: Shared,
        causes: usize,
        clusters: usize,
    },
}

impl GroupOf {
    /// The severity order: broken connections first (nothing is known there), then by health;
    /// a cycle never resolves by itself, so it ranks as a failure.
    pub(super) fn rank(&self) -> (u8, Option<Health>) {
        match self {
            GroupOf::Connection { .. } => (0, None),
            GroupOf::Object { health, .. } => (1, Some(*health)),
            GroupOf::Cycle { .. } | GroupOf::Incident { .. } => (1, Some(Health::Failed)),
        }
    }

    /// The health a group is drawn with.
    pub fn health(&self) -> Option<Health> {
        self.rank().1
    }
}

/// The text a triage group is filtered by and shown with.
pub fn group_text(group: &Group) -> String {
    headline(group, None)
}

/// What a group's row says; for a root cause, `blocks` names what it holds back, between its
/// reason and its message.
pub fn headline(group: &Group, blocks: Option<&str>) -> String {
    match &group.what {
        GroupOf::Object {
            kind,
            namespace,
            name,
            reason,
            message,
            ..
        } => format!(
            "{kind} {namespace}/{name} {}{}: {}",
            reason.as_deref().unwrap_or("-"),
            blocks.map(|b| format!(" (blocks {b})")).unwrap_or_default(),
            message.as_deref().unwrap_or("")
        ),
        GroupOf::Cycle { objects } => {
            let names: Vec<String> = objects
                .iter()
                .map(|k| format!("{} {}/{}", k.kind, k.namespace, k.name))
                .collect();
            format!(
                "dependsOn cycle: {} — never ready until it is broken",
                names.join(" ⇄ ")
            )
        }
        GroupOf::Connection { phase, error } => {
            format!("cluster {phase}: {}", error.as_deref().unwrap_or(""))
        }
        GroupOf::Incident { shared, causes, .. } => format!(
            "{} {} — {}{}",
            shared.endpoint,
            shared.class.says(),
            crate::units::count(*causes, "root cause", "root causes"),
            blocks.map(|b| format!(" (blocks {b})")).unwrap_or_default(),
        ),
    }
}
