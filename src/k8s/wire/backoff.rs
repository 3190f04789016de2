//! Exponential backoff with jitter, so that clusters (and kinds) failing together do not retry
//! together.

use std::time::Duration;

use tokio::time::Instant;

/// How long work must go well before a failure counts as a first one again. A server that
/// accepts a watch and breaks it at once is then retried ever more slowly, not every
/// `initial` forever.
pub const STAY_HEALTHY: Duration = Duration::from_secs(60);

/// Doubles from `initial` to `max`; each delay is jittered by up to a quarter, downwards.
/// Delays are kept in milliseconds (u32: 49 days): a fleet keeps one per watch.
pub struct Backoff {
    initial: u32,
    max: u32,
    current: u32,
    jitter: u64,
    /// Since when the work has gone well, without a failure since.
    healthy_since: Option<Instant>,
}

fn millis(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX)
}

impl Backoff {
    pub fn new(initial: Duration, max: Duration, seed: u64) -> Backoff {
        let initial = millis(initial);
        Backoff {
            initial,
            max: millis(max).max(initial),
            current: initial,
            jitter: seed | 1,
            healthy_since: None,
        }
    }

    /// The work went well (a watch delivered an event, a cluster is live). Once it has gone
    /// well for [`STAY_HEALTHY`], the next failure backs off from `initial` again.
    pub fn healthy(&mut self) {
        self.healthy_since.get_or_insert_with(Instant::now);
    }

    /// The delay before the next attempt, after a failure.
    pub fn next_delay(&mut self) -> Duration {
        if self
            .healthy_since
            .take()
            .is_some_and(|since| since.elapsed() >= STAY_HEALTHY)
        {
            self.current = self.initial;
        }
        let base = u64::from(self.current);
        let cut = base / 4;
        let delay = base - if cut == 0 { 0 } else { self.draw() % cut };
        self.current = self.current.saturating_mul(2).min(self.max);
        Duration::from_millis(delay)
    }

    /// The delay before the next attempt when the server said when to ask again (429 with
    /// `Retry-After`): that, jittered upwards by up to a quarter so that the requests it turned
    /// away together do not come back together, and at most the maximum. The backoff does not
    /// grow: a server that says when it will have room is asked then, not ever later, or a
    /// cluster it throttled for a while stays unread long after the server is free.
    pub fn asked(&mut self, after: Duration) -> Duration {
        let base = u64::from(millis(after).min(self.max));
        let spread = base / 4;
        let delay = base + if spread == 0 { 0 } else { self.draw() % spread };
        Duration::from_millis(delay.min(u64::from(self.max)))
    }

    /// The next jitter: xorshift, cheap and deterministic per seed.
    fn draw(&mut self) -> u64 {
        self.jitter ^= self.jitter << 13;
        self.jitter ^= self.jitter >> 7;
        self.jitter ^= self.jitter << 17;
        self.jitter
    }

    pub fn reset(&mut self) {
        self.current = self.initial;
        self.healthy_since = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_up_to_the_maximum_with_bounded_jitter_and_resets() {
        let mut b = Backoff::new(Duration::from_secs(1), Duration::from_secs(8), 42);
        let delays: Vec<_> = (0..6).map(|_| b.next_delay()).collect();
        for (d, base) in delays.iter().zip([1, 2, 4, 8, 8, 8]) {
            let base = Duration::from_secs(base);
            assert!(*d <= base && *d >= base * 3 / 4, "{d:?} vs {base:?}");
        }
        b.reset();
        assert!(b.next_delay() <= Duration::from_secs(1));
    }

    #[test]
    fn a_server_that_says_when_is_asked_then_and_the_backoff_does_not_grow() {
        let mut b = Backoff::new(Duration::from_millis(500), Duration::from_secs(60), 3);
        let asked: Vec<_> = (0..20).map(|_| b.asked(Duration::from_secs(1))).collect();
        for d in &asked {
            assert!(
                *d >= Duration::from_secs(1) && *d < Duration::from_millis(1250),
                "{d:?}"
            );
        }
        assert!(
            asked.windows(2).any(|w| w[0] != w[1]),
            "jittered: {asked:?}"
        );
        // What it did not grow: the next failure without a time is still a first one.
        assert!(b.next_delay() <= Duration::from_millis(500));
        // A server asking for longer than the maximum waits the maximum.
        assert_eq!(b.asked(Duration::from_secs(3600)), Duration::from_secs(60));
    }

    #[tokio::test(start_paused = true)]
    async fn only_a_long_enough_health_resets_the_delay() {
        let mut b = Backoff::new(Duration::from_secs(1), Duration::from_secs(300), 7);
        // A server that accepts every watch and breaks it soon after.
        let mut delays = Vec::new();
        for _ in 0..8 {
            b.healthy();
            tokio::time::sleep(Duration::from_secs(5)).await;
            delays.push(b.next_delay());
        }
        for (d, base) in delays.iter().zip([1, 2, 4, 8, 16, 32, 64, 128]) {
            let base = Duration::from_secs(base);
            assert!(*d <= base && *d >= base * 3 / 4, "{d:?} vs {base:?}");
        }
        // Healthy for a minute: the next failure is a first one again.
        b.healthy();
        tokio::time::sleep(STAY_HEALTHY).await;
        assert!(b.next_delay() <= Duration::from_secs(1));
        // Health is earned again after each failure.
        tokio::time::sleep(STAY_HEALTHY).await;
        assert!(b.next_delay() > Duration::from_secs(1));
    }
}
