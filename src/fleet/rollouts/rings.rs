//! Rings: how clusters are grouped for a rollout, in promotion order.

use crate::fleet::ClusterInfo;
use crate::glob::glob_match;

/// How clusters are grouped into rings, in promotion order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rings {
    /// Globs, in order: over workspace names, or over the values of `label`.
    pub patterns: Vec<String>,
    /// A cluster label whose value names the ring (`ring = "canary"`).
    pub label: Option<String>,
}

impl Rings {
    /// The name of the ring `info`'s cluster is in.
    pub fn name_of<'a>(&'a self, info: &'a ClusterInfo) -> &'a str {
        self.of(info).1
    }

    /// The ring of one cluster: its place in the order, and its name. Without patterns or a
    /// label each workspace is a ring, by name; a cluster that no pattern matches comes last.
    pub(super) fn of<'a>(&'a self, info: &'a ClusterInfo) -> ((u8, usize), &'a str) {
        let value = match &self.label {
            Some(label) => match info.labels.get(label) {
                Some(v) => v.as_str(),
                None => return ((3, 0), "(no ring)"),
            },
            None => info.workspace.as_str(),
        };
        match self.patterns.iter().position(|p| glob_match(p, value)) {
            Some(i) => ((0, i), self.patterns[i].as_str()),
            // Label values and workspaces outside the list: each its own ring, by name.
            None if self.label.is_some() || self.patterns.is_empty() => ((1, 0), value),
            None => ((2, 0), "(other)"),
        }
    }
}
