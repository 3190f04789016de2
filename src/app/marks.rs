//! The objects marked for the next action, owned here: marked and unmarked a selection at a time,
//! a view's rows or a rollout's stuck copies at once, used up by the action they went to.

use std::collections::HashSet;

use crate::fleet::ObjectKey;
use crate::fleet::index::ClusterId;

/// One object on one cluster.
type Marked = (ClusterId, ObjectKey);

/// The marked objects, in no order; [`MarkedObjects::sorted`] gives them in the fleet's.
#[derive(Debug, Default)]
pub struct MarkedObjects {
    marked: HashSet<Marked>,
}

impl MarkedObjects {
    /// MarkedObjects `objects`, or unmarks them when every one is marked already (as `space` does in
    /// k9s).
    pub fn toggle(&mut self, objects: Vec<Marked>) {
        let all_marked = !objects.is_empty() && objects.iter().all(|o| self.marked.contains(o));
        for o in objects {
            if all_marked {
                self.marked.remove(&o);
            } else {
                self.marked.insert(o);
            }
        }
    }

    /// MarkedObjects `objects`; how many were not marked yet.
    pub fn add(&mut self, objects: impl IntoIterator<Item = Marked>) -> usize {
        let mut added = 0;
        for o in objects {
            added += usize::from(self.marked.insert(o));
        }
        added
    }

    /// Unmarks every object; how many were marked.
    pub fn clear(&mut self) -> usize {
        let n = self.marked.len();
        self.marked = HashSet::new();
        n
    }

    pub fn contains(&self, object: &Marked) -> bool {
        self.marked.contains(object)
    }

    pub fn len(&self) -> usize {
        self.marked.len()
    }

    pub fn is_empty(&self) -> bool {
        self.marked.is_empty()
    }

    /// Every marked object, in the order of clusters, then keys.
    pub fn sorted(&self) -> Vec<Marked> {
        let mut marked: Vec<Marked> = self.marked.iter().cloned().collect();
        marked.sort();
        marked
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::FluxKind;

    fn object(cluster: u32, name: &str) -> Marked {
        (
            ClusterId(cluster),
            ObjectKey::new(FluxKind::Kustomization, "flux-system", name),
        )
    }

    #[test]
    fn a_selection_toggles_whole_and_marks_are_counted_and_used_up() {
        let mut marks = MarkedObjects::default();
        marks.toggle(vec![object(0, "a"), object(1, "a")]);
        assert_eq!(marks.len(), 2);
        // Part of it marked: the rest joins; all of it marked: all of it leaves.
        marks.toggle(vec![object(0, "a"), object(0, "b")]);
        assert_eq!(marks.len(), 3);
        marks.toggle(vec![object(0, "a"), object(0, "b")]);
        assert_eq!(marks.sorted(), [object(1, "a")]);
        assert_eq!(marks.add([object(1, "a"), object(2, "c")]), 1);
        assert!(marks.contains(&object(2, "c")));
        assert_eq!(marks.clear(), 2);
        assert!(marks.is_empty());
        // Nothing selected changes nothing.
        marks.toggle(Vec::new());
        assert!(marks.is_empty());
    }
}
