//! The matrix's ring headers beside its spread: how each ring delivered the thing, from the
//! history read when the matrix opened (`fleet::rollouts::metrics`), worked out once when the
//! history arrives — which ring each cluster is in and how many copies it has, as the index says
//! then.

use std::collections::HashMap;

use super::model::Model;
use super::view::{View, clusters_in};
use crate::fleet::ObjectKey;
use crate::fleet::history::RecordedChange;
use crate::fleet::rollouts::metrics::{RingDelivery, deliveries};

/// The rings' deliveries of `key` in the scope of the matrix on top, from `history`.
pub(super) fn of(model: &Model, key: &ObjectKey, history: &[RecordedChange]) -> Vec<RingDelivery> {
    let View::Matrix { scope, .. } = model.screen().view else {
        return Vec::new();
    };
    let rollout = &model.settings().rollout;
    let mut ring_of: HashMap<&str, &str> = HashMap::new();
    // Its copies per ring; the other things' rings count by what the history shows.
    let mut copies: HashMap<&str, usize> = HashMap::new();
    for (_, c) in clusters_in(model.index(), scope) {
        let ring = rollout.rings.name_of(&c.info);
        ring_of.insert(&c.info.name, ring);
        if c.objects.contains_key(key) {
            *copies.entry(ring).or_default() += 1;
        }
    }
    let ring = |cluster: &str| ring_of.get(cluster).map(|r| r.to_string());
    let count =
        |ring: &str, thing: &ObjectKey| (thing == key).then(|| copies.get(ring).copied()).flatten();
    deliveries(history, &ring, &count, rollout.rules.suspect_window)
        .into_iter()
        .filter(|d| d.key == *key)
        .collect()
}
