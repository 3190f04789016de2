//! Which summarized clusters have their objects watched: the ones opened last, at most
//! `warm_clusters` of them. Opening one more lets the least recently opened go.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

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
    /// Each cluster task's flag: true while its objects are to be watched.
    flags: HashMap<ClusterKey, watch::Sender<bool>>,
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
    pub fn register(&self, key: &ClusterKey) -> watch::Receiver<bool> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let open = state.order.contains(key);
        let (tx, rx) = watch::channel(open);
        state.flags.insert(key.clone(), tx);
        rx
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
        if let Some(flag) = state.flags.get(key) {
            flag.send_replace(true);
        }
        while state.order.len() > self.capacity {
            if let Some(cold) = state.order.pop_back()
                && let Some(flag) = state.flags.get(&cold)
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
        let warm = Warm::new(2);
        let key = |k: &str| ClusterKey::new(k);
        let (a, b, c) = (
            warm.register(&key("a")),
            warm.register(&key("b")),
            warm.register(&key("c")),
        );
        warm.open(&key("a"));
        warm.open(&key("b"));
        assert!(*a.borrow() && *b.borrow() && !*c.borrow());
        // Opening a again makes b the least recent.
        warm.open(&key("a"));
        warm.open(&key("c"));
        assert!(*a.borrow() && !*b.borrow() && *c.borrow());
        assert_eq!(warm.open_now(), [key("c"), key("a")]);
        // A task that restarts finds its cluster still open.
        let again = warm.register(&key("c"));
        assert!(*again.borrow());
        // A cluster nobody registered can be opened (its task starts later) and counts.
        warm.open(&key("d"));
        assert_eq!(warm.open_now(), [key("d"), key("c")]);
        assert!(!*a.borrow());
    }
}
