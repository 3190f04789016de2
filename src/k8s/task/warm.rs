//! Which summarized clusters have their objects watched: the ones opened last, at most
//! `warm_clusters` of them. Opening one more lets the least recently opened go.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::fleet::ClusterKey;

/// Shared by the engine's cluster tasks (each waits on its own flag) and its reader (which
/// opens clusters for the user).
pub struct Warm {
    capacity: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Open clusters, the most recently opened first.
    order: VecDeque<ClusterKey>,
    /// Each cluster task's flag: true while its objects are to be watched; with the number of
    /// the registration it belongs to.
    flags: HashMap<ClusterKey, (u64, watch::Sender<bool>)>,
    registrations: u64,
}

/// A cluster task's flag; dropped with the task, it is forgotten (a cluster that left the
/// fleet keeps nothing here).
pub struct OpenFlag {
    pub open: watch::Receiver<bool>,
    warm: Arc<Warm>,
    key: ClusterKey,
    registration: u64,
}

impl Drop for OpenFlag {
    fn drop(&mut self) {
        let mut state = self.warm.state.lock().unwrap_or_else(|e| e.into_inner());
        // A task restarted meanwhile registered again: that flag stays.
        if state
            .flags
            .get(&self.key)
            .is_some_and(|(n, _)| *n == self.registration)
        {
            state.flags.remove(&self.key);
        }
    }
}

impl Warm {
    pub fn new(capacity: usize) -> Warm {
        Warm {
            capacity: capacity.max(1),
            state: Mutex::new(State::default()),
        }
    }

    /// The flag the task of `key` follows; a cluster registered again (its task restarted)
    /// keeps whether it is open.
    pub fn register(self: &Arc<Warm>, key: &ClusterKey) -> OpenFlag {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let open = state.order.contains(key);
        let (tx, rx) = watch::channel(open);
        state.registrations += 1;
        let registration = state.registrations;
        state.flags.insert(key.clone(), (registration, tx));
        OpenFlag {
            open: rx,
            warm: self.clone(),
            key: key.clone(),
            registration,
        }
    }

    /// Watches `key`'s objects from now on; the least recently opened cluster beyond the
    /// capacity goes back to its summary.
    pub fn open(&self, key: &ClusterKey) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.order.front() == Some(key) {
            return;
        }
        state.order.retain(|k| k != key);
        state.order.push_front(key.clone());
        if let Some((_, flag)) = state.flags.get(key) {
            flag.send_replace(true);
        }
        while state.order.len() > self.capacity {
            if let Some(cold) = state.order.pop_back()
                && let Some((_, flag)) = state.flags.get(&cold)
            {
                flag.send_replace(false);
            }
        }
    }

    /// The clusters open now, the most recently opened first.
    #[cfg(test)]
    fn open_now(&self) -> Vec<ClusterKey> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.order.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_opened_cluster_goes_back_to_its_summary() {
        let warm = Arc::new(Warm::new(2));
        let key = |k: &str| ClusterKey::new(k);
        let (a, b, c) = (
            warm.register(&key("a")),
            warm.register(&key("b")),
            warm.register(&key("c")),
        );
        warm.open(&key("a"));
        warm.open(&key("b"));
        assert!(*a.open.borrow() && *b.open.borrow() && !*c.open.borrow());
        // Opening a again makes b the least recent.
        warm.open(&key("a"));
        warm.open(&key("c"));
        assert!(*a.open.borrow() && !*b.open.borrow() && *c.open.borrow());
        assert_eq!(warm.open_now(), [key("c"), key("a")]);
        // A task that restarts finds its cluster still open; the old task ending later does
        // not take the new one's flag.
        let again = warm.register(&key("c"));
        assert!(*again.open.borrow());
        drop(c);
        warm.open(&key("b"));
        warm.open(&key("c"));
        assert!(*again.open.borrow());
        // A cluster nobody registered can be opened (its task starts later) and counts.
        warm.open(&key("d"));
        assert_eq!(warm.open_now(), [key("d"), key("c")]);
        assert!(!*a.open.borrow());
        // A task that ends leaves no flag behind.
        drop((a, b, again));
        let state = warm.state.lock().unwrap_or_else(|e| e.into_inner());
        assert!(state.flags.is_empty());
    }
}
