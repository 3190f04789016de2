//! A cluster's objects, its dependency edges and causes, kept in sorted vectors: a cluster holds
//! tens of objects, and a hash map's room for them (buckets at most seven-eighths full, in powers
//! of two) cost about twice the entries themselves, a B-tree's (nodes of eleven, often half
//! full, 1.5 KiB for a cluster of twenty) about twice as well.

use std::collections::HashMap;

use crate::fleet::{FluxKind, FluxSummary, ObjectKey};

/// An entry of a [`SortedVec`]: the key it is sorted by, and what it holds. A summary is its own
/// entry (it carries its key); any other value is kept beside its key.
pub trait Keyed {
    type Value;
    fn key(&self) -> &ObjectKey;
    fn value(&self) -> &Self::Value;
    fn into_value(self) -> Self::Value;
}

impl<V> Keyed for (ObjectKey, V) {
    type Value = V;

    fn key(&self) -> &ObjectKey {
        &self.0
    }

    fn value(&self) -> &V {
        &self.1
    }

    fn into_value(self) -> V {
        self.1
    }
}

impl Keyed for FluxSummary {
    type Value = FluxSummary;

    fn key(&self) -> &ObjectKey {
        &self.key
    }

    fn value(&self) -> &FluxSummary {
        self
    }

    fn into_value(self) -> FluxSummary {
        self
    }
}

/// Entries sorted by their keys, one under each; looked up by binary search. Inserting or
/// removing shifts what follows (32 to 152 bytes an entry): cheap for a cluster's tens or
/// thousands of objects; a relist puts a kind's entries back at once, and the graph replaces an
/// entry where it stands when it can. Nothing hands out an entry to change in place but a map's
/// value ([`Sorted`]): a key changed where it stands would break the order.
#[derive(Clone, Debug, PartialEq)]
pub struct SortedVec<E> {
    entries: Vec<E>,
}

/// Keys to values, sorted by key.
pub type Sorted<V> = SortedVec<(ObjectKey, V)>;

impl<E> Default for SortedVec<E> {
    fn default() -> Self {
        SortedVec {
            entries: Vec::new(),
        }
    }
}

/// Collected from entries in any order; of two under one key, the last is kept.
impl<E: Keyed> FromIterator<E> for SortedVec<E> {
    fn from_iter<I: IntoIterator<Item = E>>(entries: I) -> Self {
        let mut entries: Vec<E> = entries.into_iter().collect();
        sort_keeping_last(&mut entries);
        SortedVec { entries }
    }
}

/// Sorts `entries` by key; of several under one key, the last given is kept (as a map keeps
/// what was put last), in the first one's place. Room fitted.
fn sort_keeping_last<E: Keyed>(entries: &mut Vec<E>) {
    // Stable: entries under one key stay in the order given.
    entries.sort_by(|a, b| a.key().cmp(b.key()));
    entries.dedup_by(|later, kept| {
        let same = later.key() == kept.key();
        if same {
            std::mem::swap(later, kept);
        }
        same
    });
    entries.shrink_to_fit();
}

/// An entry and what it holds, as the map's iterators give them.
fn pair<E: Keyed>(entry: &E) -> (&ObjectKey, &E::Value) {
    (entry.key(), entry.value())
}

impl<E: Keyed> SortedVec<E> {
    pub fn new() -> Self {
        SortedVec::default()
    }

    fn position(&self, key: &ObjectKey) -> Result<usize, usize> {
        self.entries.binary_search_by(|e| e.key().cmp(key))
    }

    pub fn get(&self, key: &ObjectKey) -> Option<&E::Value> {
        self.position(key).ok().map(|i| self.entries[i].value())
    }

    /// Every entry, in the order of keys.
    pub fn iter(&self) -> impl Iterator<Item = (&ObjectKey, &E::Value)> + Clone {
        self.entries.iter().map(pair)
    }

    pub fn contains_key(&self, key: &ObjectKey) -> bool {
        self.position(key).is_ok()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Keeps the entries whose key `keep` says.
    pub fn retain(&mut self, mut keep: impl FnMut(&ObjectKey) -> bool) {
        self.entries.retain(|e| keep(e.key()));
    }

    pub fn keys(&self) -> impl Iterator<Item = &ObjectKey> {
        self.entries.iter().map(E::key)
    }

    pub fn get_key_value(&self, key: &ObjectKey) -> Option<(&ObjectKey, &E::Value)> {
        self.position(key).ok().map(|i| pair(&self.entries[i]))
    }

    pub fn values(&self) -> impl Iterator<Item = &E::Value> + Clone {
        self.entries.iter().map(E::value)
    }

    pub fn into_values(self) -> impl Iterator<Item = E::Value> {
        self.entries.into_iter().map(E::into_value)
    }

    pub fn clear(&mut self) {
        self.entries = Vec::new();
    }

    /// Where the entries of `kind` stand (keys sort by kind first).
    fn kind_range(&self, kind: FluxKind) -> std::ops::Range<usize> {
        let start = self.entries.partition_point(|e| e.key().kind < kind);
        let end = self.entries.partition_point(|e| e.key().kind <= kind);
        start..end
    }

    /// The entries of one kind, in order.
    pub fn of_kind(&self, kind: FluxKind) -> impl Iterator<Item = (&ObjectKey, &E::Value)> {
        self.entries[self.kind_range(kind)].iter().map(pair)
    }

    /// Puts back a kind's entries, none of which is here (taken out by [`SortedVec::take_kind`]),
    /// in any order; of two under one key, the last given is kept. One splice.
    pub fn put_kind(&mut self, mut entries: Vec<E>) {
        let Some(kind) = entries.first().map(|e| e.key().kind) else {
            return;
        };
        sort_keeping_last(&mut entries);
        let at = self.entries.partition_point(|e| e.key().kind < kind);
        self.entries.splice(at..at, entries);
        self.entries.shrink_to_fit();
    }

    /// Takes out the entries of one kind, leaving the rest in order.
    pub fn take_kind(&mut self, kind: FluxKind) -> Vec<E> {
        let range = self.kind_range(kind);
        self.entries.drain(range).collect()
    }

    pub fn remove(&mut self, key: &ObjectKey) -> Option<E::Value> {
        self.position(key)
            .ok()
            .map(|i| self.entries.remove(i).into_value())
    }

    /// Gives back the room that inserting one at a time left over.
    pub fn shrink(&mut self) {
        self.entries.shrink_to_fit();
    }

    /// Puts `entry` in its place, giving back what was under its key.
    fn put(&mut self, entry: E) -> Option<E::Value> {
        match self.position(entry.key()) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i], entry).into_value()),
            Err(i) => {
                self.insert_at(i, entry);
                None
            }
        }
    }

    /// Inserts `entry` at `i`, shifting what follows. Full, the room grows by an eighth rather
    /// than doubling: a cluster's twenty summaries take 3 KiB, and one object more should not
    /// leave room for nineteen others (another 2.9 KiB); an eighth still keeps growth amortized.
    fn insert_at(&mut self, i: usize, entry: E) {
        if self.entries.len() == self.entries.capacity() {
            self.entries.reserve_exact(self.entries.len() / 8 + 1);
        }
        self.entries.insert(i, entry);
    }
}

impl<V> Sorted<V> {
    /// Adds `more` (whose keys are not here yet, or replace what is), sorted in at once and room
    /// fitted: inserting them one at a time shifts what follows each, which for the thousands of
    /// causes a large cluster can solve at once is quadratic.
    pub fn extend(&mut self, more: HashMap<ObjectKey, V>) {
        if more.len() <= 8 {
            // A change solves a few: shifting is cheaper than sorting everything.
            for (key, value) in more {
                self.insert(key, value);
            }
            return;
        }
        // The ones here come first: under a key that is here, the new value takes its place.
        self.entries.extend(more);
        sort_keeping_last(&mut self.entries);
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    /// The value under `key`, made by `make` when there is none.
    pub fn get_or_insert_with(&mut self, key: &ObjectKey, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.position(key) {
            Ok(i) => i,
            Err(i) => {
                self.insert_at(i, (key.clone(), make()));
                i
            }
        };
        &mut self.entries[i].1
    }

    pub fn get_mut(&mut self, key: &ObjectKey) -> Option<&mut V> {
        self.position(key).ok().map(|i| &mut self.entries[i].1)
    }

    /// Puts `value` under `key`, giving back what was there.
    pub fn insert(&mut self, key: ObjectKey, value: V) -> Option<V> {
        self.put((key, value))
    }
}

/// A cluster's summaries, each under its own key.
impl SortedVec<FluxSummary> {
    /// Puts `summary` under its key, giving back the one that was there.
    pub fn insert(&mut self, summary: FluxSummary) -> Option<FluxSummary> {
        self.put(summary)
    }
}

/// For tests, as a map's: `causes[&key]`.
#[cfg(test)]
#[allow(clippy::expect_used)]
impl<E: Keyed> std::ops::Index<&ObjectKey> for SortedVec<E> {
    type Output = E::Value;

    fn index(&self, key: &ObjectKey) -> &E::Value {
        self.get(key).expect("no entry for the key")
    }
}

impl<'a, E: Keyed> IntoIterator for &'a SortedVec<E> {
    type Item = (&'a ObjectKey, &'a E::Value);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, E>, fn(&'a E) -> Self::Item>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(pair)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::FluxKind;

    fn key(name: &str) -> ObjectKey {
        ObjectKey::new(FluxKind::Kustomization, "flux-system", name)
    }

    #[test]
    fn a_sorted_map_finds_what_was_put_whatever_the_order() {
        let mut map: Sorted<u32> = Sorted::default();
        for (i, name) in ["m", "c", "x", "a", "q"].iter().enumerate() {
            map.insert(key(name), i as u32);
        }
        map.insert(key("c"), 10);
        assert_eq!(map.get(&key("c")), Some(&10));
        assert_eq!(map.get(&key("q")), Some(&4));
        assert_eq!(map.get(&key("b")), None);
        assert_eq!(
            map.keys().map(|k| &*k.name).collect::<Vec<_>>(),
            ["a", "c", "m", "q", "x"]
        );
        assert_eq!(map.remove(&key("m")), Some(0));
        assert_eq!(map.remove(&key("m")), None);
        *map.get_or_insert_with(&key("b"), || 7) += 1;
        *map.get_or_insert_with(&key("b"), || 100) += 1;
        assert_eq!(map.get(&key("b")), Some(&9));
        *map.get_mut(&key("a")).unwrap() = 3;
        map.shrink();
        assert_eq!(
            map.keys().map(|k| &*k.name).collect::<Vec<_>>(),
            ["a", "b", "c", "q", "x"]
        );
        assert_eq!(map.get(&key("a")), Some(&3));
        map.retain(|k| &*k.name != "q");
        map.extend(HashMap::from([(key("z"), 1), (key("b"), 2), (key("d"), 4)]));
        assert_eq!(
            map.iter().map(|(k, v)| (&*k.name, *v)).collect::<Vec<_>>(),
            [("a", 3), ("b", 2), ("c", 10), ("d", 4), ("x", 2), ("z", 1)]
        );
        assert_eq!(map.len(), 6);
        // Many at once are merged in one pass, replacing what was under the same key.
        let many: HashMap<ObjectKey, u32> = (0..9)
            .map(|i| (key(&format!("m{i}")), i))
            .chain([(key("a"), 30)])
            .collect();
        map.extend(many);
        assert_eq!(map.len(), 15);
        assert_eq!(
            (map[&key("a")], map[&key("m4")], map[&key("z")]),
            (30, 4, 1)
        );
        assert!(map.iter().map(|(k, _)| k).is_sorted());
    }

    #[test]
    fn a_kind_taken_out_and_put_back_leaves_the_other_kinds_where_they_were() {
        let of = |kind, name: &str| ObjectKey::new(kind, "flux-system", name);
        let mut map: Sorted<u32> = [
            (of(FluxKind::Kustomization, "b"), 1),
            (of(FluxKind::GitRepository, "a"), 2),
            (of(FluxKind::HelmRelease, "c"), 3),
            (of(FluxKind::Kustomization, "a"), 4),
            // Of two under one key, the last is kept, as a map's collect keeps it.
            (of(FluxKind::Kustomization, "b"), 5),
        ]
        .into_iter()
        .collect();
        assert_eq!(map.len(), 4);
        assert!(map.iter().map(|(k, _)| k).is_sorted());
        let names = |map: &Sorted<u32>, kind| {
            map.of_kind(kind)
                .map(|(k, v)| (k.name.to_string(), *v))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(&map, FluxKind::Kustomization),
            [("a".to_string(), 4), ("b".to_string(), 5)]
        );
        let taken = map.take_kind(FluxKind::Kustomization);
        assert_eq!(taken.len(), 2);
        assert!(names(&map, FluxKind::Kustomization).is_empty());
        assert_eq!(map.len(), 2);
        map.put_kind(vec![
            (of(FluxKind::Kustomization, "z"), 9),
            (of(FluxKind::Kustomization, "c"), 8),
        ]);
        assert!(map.iter().map(|(k, _)| k).is_sorted());
        assert_eq!(
            names(&map, FluxKind::Kustomization),
            [("c".to_string(), 8), ("z".to_string(), 9)]
        );
        assert_eq!(map.get(&of(FluxKind::HelmRelease, "c")), Some(&3));
        assert_eq!(map.get(&of(FluxKind::GitRepository, "a")), Some(&2));
        // A kind none of which is held yet goes where its kind sorts.
        map.take_kind(FluxKind::GitRepository);
        map.put_kind(vec![(of(FluxKind::GitRepository, "g"), 7)]);
        assert!(map.iter().map(|(k, _)| k).is_sorted());
        assert_eq!(map.len(), 4);
        map.put_kind(Vec::new());
        assert_eq!(map.len(), 4);
    }
}
