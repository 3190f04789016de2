//! A cluster's dependency edges, kept in sorted vectors: a cluster holds tens of objects, and a
//! hash map's room for them (buckets at most seven-eighths full, in powers of two) cost about
//! twice the edges themselves.

use crate::fleet::ObjectKey;

/// Keys to values, sorted by key; looked up by binary search. Inserting or removing shifts what
/// follows (56 bytes an entry): cheap for a cluster's tens or hundreds of objects, and the graph
/// replaces an entry where it stands when it can.
#[derive(Debug)]
pub(super) struct Sorted<V> {
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

    pub(super) fn get(&self, key: &ObjectKey) -> Option<&V> {
        self.position(key).ok().map(|i| &self.entries[i].1)
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
    }
}
