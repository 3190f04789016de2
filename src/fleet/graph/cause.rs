//! What holds a not-ready object back, as the graph solves it: a root, the roots up its chains,
//! a cycle — or nothing but its controller's retry.

use crate::fleet::ObjectKey;

/// Why a not-ready object is not ready. Its lists are boxed slices: a cluster keeps a cause for
/// each of its not-ready objects, and a list grown by pushing kept room for four keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// Nothing it depends on holds it back: it is a root cause.
    Root,
    /// Held back by these roots, up its chains (sorted, each once).
    Blocked(Box<[ObjectKey]>),
    /// On a cycle of dependencies, or held back only by one: the objects of the cycle (sorted),
    /// which is reported and never followed. Behind several cycles, the first of them in order.
    Cycle(Box<[ObjectKey]>),
    /// It said `DependencyNotReady` when its controller last ran, and every dependency is now
    /// there and Ready: nothing holds it back, and it is no cause either — it waits for the
    /// controller's retry (`retryInterval`).
    AwaitsRetry,
}

impl Cause {
    /// What holds `key` back, where triage and `get --root-causes` count it: its roots; for a
    /// cycle, the cycle's first object, which stands for the cycle (nothing for that object
    /// itself, nor for a root).
    pub fn held_by<'a>(&'a self, key: &ObjectKey) -> &'a [ObjectKey] {
        match self {
            Cause::Blocked(roots) => roots,
            Cause::Cycle(objects) if objects.first() != Some(key) => &objects[..1],
            Cause::Cycle(_) | Cause::Root | Cause::AwaitsRetry => &[],
        }
    }

    /// A cause of its own, where nothing holds it back: a root, or on a cycle (whose first
    /// object stands for it); not one that only waits for its retry.
    pub fn is_own(&self) -> bool {
        matches!(self, Cause::Root | Cause::Cycle(_))
    }
}
