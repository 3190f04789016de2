//! A cluster's dependency edges and causes, kept in sorted vectors: a cluster holds tens of
//! objects, and a hash map's room for them (buckets at most seven-eighths full, in powers of two)
//! cost about twice the entries themselves.

use std::collections::HashMap;
use std::ops::Bound;

use crate::fleet::{FluxKind, ObjectKey};

/// Keys to values, sorted by key; looked up by binary search. Inserting or removing shifts what
/// follows (56 bytes an entry): cheap for a cluster's tens or hundreds of objects, and the graph
/// replaces an entry where it stands when it can.
#[derive(Debug, PartialEq)]
pub struct Sorted<V> {
    entries: Vec<(ObjectKey, V)>,
}

impl<V> Default for Sorted<V> {
    fn default() -> Self {
        Sorted {
            entries: Vec::new(),
        }
    }
}

impl<V> Sorted<V> {
    fn position(&self, key: &ObjectKey) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| k.cmp(key))
    }

    pub fn get(&self, key: &ObjectKey) -> Option<&V> {
        self.position(key).ok().map(|i| &self.entries[i].1)
    }

    /// Every entry, in the order of keys.
    pub fn iter(&self) -> impl Iterator<Item = (&ObjectKey, &V)> {
        self.entries.iter().map(|(k, v)| (k, v))
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
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&ObjectKey) -> bool) {
        self.entries.retain(|(k, _)| keep(k));
    }

    /// Adds `more` (whose keys are not here yet, or replace what is), sorted in at once and room
    /// fitted: inserting them one at a time shifts what follows each, which for the thousands of
    /// causes a large cluster can solve at once is quadratic.
    pub(super) fn extend(&mut self, more: HashMap<ObjectKey, V>) {
        if more.len() <= 8 {
            // A change solves a few: shifting is cheaper than sorting everything.
            for (key, value) in more {
                self.insert(key, value);
            }
            return;
        }
        self.entries.extend(more);
        // Stable: of two entries under one key, the one that was here comes first; the new one's
        // value takes its place.
        self.entries.sort_by(|a, b| a.0.cmp(&b.0));
        self.entries.dedup_by(|new, old| {
            let same = new.0 == old.0;
            if same {
                std::mem::swap(&mut new.1, &mut old.1);
            }
            same
        });
        self.entries.shrink_to_fit();
    }

    pub(super) fn keys(&self) -> impl Iterator<Item = &ObjectKey> {
        self.entries.iter().map(|(k, _)| k)
    }

    pub(super) fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    /// The value under `key`, made by `make` when there is none.
    pub(super) fn get_or_insert_with(
        &mut self,
        key: &ObjectKey,
        make: impl FnOnce() -> V,
    ) -> &mut V {
        let i = match self.position(key) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (key.clone(), make()));
                i
            }
        };
        &mut self.entries[i].1
    }

    pub(super) fn get_mut(&mut self, key: &ObjectKey) -> Option<&mut V> {
        self.position(key).ok().map(|i| &mut self.entries[i].1)
    }

    pub(super) fn insert(&mut self, key: ObjectKey, value: V) {
        match self.position(&key) {
            Ok(i) => self.entries[i].1 = value,
            Err(i) => self.entries.insert(i, (key, value)),
        }
    }

    pub(super) fn remove(&mut self, key: &ObjectKey) -> Option<V> {
        self.position(key).ok().map(|i| self.entries.remove(i).1)
    }

    /// Gives back the room that inserting one at a time left over.
    pub(super) fn shrink(&mut self) {
        self.entries.shrink_to_fit();
    }
}

/// For tests, as a map's: `causes[&key]`.
#[cfg(test)]
#[allow(clippy::expect_used)]
impl<V> std::ops::Index<&ObjectKey> for Sorted<V> {
    type Output = V;

    fn index(&self, key: &ObjectKey) -> &V {
        self.get(key).expect("no entry for the key")
    }
}

impl<'a, V> IntoIterator for &'a Sorted<V> {
    type Item = (&'a ObjectKey, &'a V);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (ObjectKey, V)>,
        fn(&'a (ObjectKey, V)) -> (&'a ObjectKey, &'a V),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(k, v)| (k, v))
    }
}

/// Every key of one kind, in order (keys sort by kind first).
pub fn kind_range(kind: FluxKind) -> (Bound<ObjectKey>, Bound<ObjectKey>) {
    let start = ObjectKey::new(kind, "", "");
    let end = FluxKind::ALL
        .into_iter()
        .filter(|k| *k > kind)
        .min()
        .map(|next| Bound::Excluded(ObjectKey::new(next, "", "")))
        .unwrap_or(Bound::Unbounded);
    (Bound::Included(start), end)
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
}
