//! The watch restarts of one cluster in the last five minutes: what "live, watch restarted N×
//! in 5 min" counts.

use std::collections::VecDeque;

use tokio::time::Instant;

use crate::fleet::RESTARTS_WINDOW;

/// Restarts counted at most: a cluster whose watches break this often is flapping whatever the
/// exact number, and a task should not keep a longer list.
const KEPT: usize = 999;

/// When each restart in the window happened, oldest first. Empty (and unallocated) for the
/// clusters whose watches hold, which is nearly all of them.
#[derive(Default)]
pub(in crate::k8s) struct Restarts {
    at: VecDeque<Instant>,
}

impl Restarts {
    pub(in crate::k8s) fn record(&mut self, now: Instant) {
        if self.at.len() == KEPT {
            self.at.pop_front();
        }
        self.at.push_back(now);
    }

    /// Restarts in the window ending `now`; older ones are forgotten.
    pub(in crate::k8s) fn count(&mut self, now: Instant) -> u16 {
        while self
            .at
            .front()
            .is_some_and(|t| now.duration_since(*t) >= RESTARTS_WINDOW)
        {
            self.at.pop_front();
        }
        if self.at.is_empty() {
            // Let the memory go: a cluster that flapped once should not keep its list.
            self.at = VecDeque::new();
        }
        u16::try_from(self.at.len()).unwrap_or(u16::MAX)
    }

    /// When the oldest restart leaves the window (the count drops then), if any is counted.
    pub(in crate::k8s) fn next_drop(&self) -> Option<Instant> {
        self.at.front().map(|t| *t + RESTARTS_WINDOW)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn restarts_count_for_five_minutes_and_then_not() {
        let start = Instant::now();
        let mut r = Restarts::default();
        assert_eq!(r.count(start), 0);
        assert_eq!(r.next_drop(), None);
        r.record(start);
        r.record(start + Duration::from_secs(120));
        assert_eq!(r.count(start + Duration::from_secs(121)), 2);
        assert_eq!(r.next_drop(), Some(start + RESTARTS_WINDOW));
        assert_eq!(r.count(start + RESTARTS_WINDOW), 1);
        assert_eq!(r.count(start + Duration::from_secs(420)), 0);
        assert_eq!(r.at.capacity(), 0, "nothing kept once none is counted");
        for _ in 0..KEPT + 10 {
            r.record(start);
        }
        assert_eq!(usize::from(r.count(start)), KEPT);
    }
}
