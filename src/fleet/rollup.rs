//! Objects counted by health: per cluster, per workspace, for the fleet. Kept up to date one
//! change at a time by the index, never recomputed by scanning.

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::Health;

/// How many objects are in each health.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HealthCounts([u32; Health::ALL.len()]);

impl HealthCounts {
    pub fn get(&self, health: Health) -> u32 {
        self.0[health as usize]
    }

    pub fn add(&mut self, health: Health) {
        self.0[health as usize] += 1;
    }

    pub fn sub(&mut self, health: Health) {
        let n = &mut self.0[health as usize];
        *n = n.saturating_sub(1);
    }

    pub fn total(&self) -> u32 {
        self.0.iter().sum()
    }

    /// Counts `n` more of `health`.
    pub fn add_n(&mut self, health: Health, n: u32) {
        let c = &mut self.0[health as usize];
        *c = c.saturating_add(n);
    }

    /// Adds every count of `other`.
    pub fn add_all(&mut self, other: &HealthCounts) {
        for (mine, theirs) in self.0.iter_mut().zip(other.0) {
            *mine = mine.saturating_add(theirs);
        }
    }

    /// Takes every count of `other` away.
    pub fn sub_all(&mut self, other: &HealthCounts) {
        for (mine, theirs) in self.0.iter_mut().zip(other.0) {
            *mine = mine.saturating_sub(theirs);
        }
    }

    /// Objects counted whose health says `which`.
    fn counting(&self, which: impl Fn(Health) -> bool) -> u32 {
        Health::ALL
            .into_iter()
            .filter(|h| which(*h))
            .map(|h| self.get(h))
            .sum()
    }

    /// Failing objects ([`Health::is_failing`]).
    pub fn failing(&self) -> u32 {
        self.counting(Health::is_failing)
    }

    /// Objects not ready ([`Health::is_not_ready`]).
    pub fn not_ready(&self) -> u32 {
        self.counting(Health::is_not_ready)
    }

    /// The worst health present, if any object is counted.
    pub fn worst(&self) -> Option<Health> {
        Health::ALL.into_iter().find(|h| self.get(*h) > 0)
    }

    /// Non-zero healths, worst first.
    pub fn iter(&self) -> impl Iterator<Item = (Health, u32)> + '_ {
        Health::ALL
            .into_iter()
            .map(|h| (h, self.get(h)))
            .filter(|(_, n)| *n > 0)
    }
}

/// `{"ready": 12, "failed": 1, …}` with every health present, so scripts need no defaults.
impl Serialize for HealthCounts {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(Health::ALL.len()))?;
        for h in Health::ALL {
            map.serialize_entry(h.key(), &self.get(h))?;
        }
        map.end()
    }
}
