//! Triage's level above groups: root causes whose messages say one endpoint outside the
//! clusters fails one way (`fleet::incident`) — two or more of them — stand under one incident
//! row, a registry's outage read once. A cause alone keeps its own row (its message names the
//! endpoint already).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::cache::hash_of;
use super::group::{Group, GroupOf};
use crate::app::view::RowId;
use crate::fleet::graph::Holds;
use crate::fleet::incident::{Shared, shared_cause};

/// Folds the groups of `order` that share an endpoint's failure under an incident each: the
/// incident takes the place of its first group, at the cost of all of them; its groups learn
/// they are under it. `seen` holds each group's workspaces.
pub(super) fn fold(
    found: &mut HashMap<u64, Group>,
    order: &mut Vec<(u64, usize)>,
    seen: &HashMap<u64, Vec<u32>>,
) {
    let mut by: BTreeMap<Shared, Vec<u64>> = BTreeMap::new();
    for (key, _) in order.iter() {
        let Some(Group {
            what:
                GroupOf::Object {
                    message: Some(message),
                    ..
                },
            ..
        }) = found.get(key)
        else {
            continue;
        };
        if let Some(shared) = shared_cause(message) {
            by.entry(shared).or_default().push(*key);
        }
    }
    for (shared, keys) in by.into_iter().filter(|(_, keys)| keys.len() > 1) {
        let id = hash_of(&("incident", &shared));
        let mut clusters = BTreeSet::new();
        let mut workspaces = BTreeSet::new();
        let mut holds = Holds::default();
        let (mut since, mut recent) = (None, 0);
        for key in &keys {
            let Some(group) = found.get_mut(key) else {
                continue;
            };
            group.incident = Some(id);
            clusters.extend(group.members.iter().filter_map(|m| match m {
                RowId::Object(c, _) => Some(*c),
                _ => None,
            }));
            workspaces.extend(seen.get(key).into_iter().flatten().copied());
            holds.merge(&group.holds);
            since = match (since, group.since) {
                (Some(a), Some(b)) => Some(std::cmp::min(a, b)),
                (a, b) => a.or(b),
            };
            recent += group.recent;
        }
        let cost: usize = order
            .iter()
            .filter(|(k, _)| keys.contains(k))
            .map(|(_, c)| c)
            .sum();
        let first = order.iter().position(|(k, _)| keys.contains(k));
        order.retain(|(k, _)| !keys.contains(k));
        if let Some(at) = first {
            order.insert(at, (id, cost));
        }
        found.insert(
            id,
            Group {
                what: GroupOf::Incident {
                    shared,
                    causes: keys.len(),
                    clusters: clusters.len(),
                },
                members: keys.into_iter().map(RowId::Group).collect(),
                workspaces: workspaces.len(),
                since,
                recent,
                holds,
                suspect: None,
                incident: None,
            },
        );
    }
}
