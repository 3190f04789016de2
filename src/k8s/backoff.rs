//! Exponential backoff with jitter, so that clusters (and kinds) failing together do not retry
//! together.

use std::time::Duration;

/// Doubles from `initial` to `max`; each delay is jittered by up to a quarter, downwards.
pub struct Backoff {
    initial: Duration,
    max: Duration,
    current: Duration,
    jitter: u64,
}

impl Backoff {
    pub fn new(initial: Duration, max: Duration, seed: u64) -> Backoff {
        Backoff {
            initial,
            max: max.max(initial),
            current: initial,
            jitter: seed | 1,
        }
    }

    pub fn next_delay(&mut self) -> Duration {
        // xorshift: cheap, deterministic per seed.
        self.jitter ^= self.jitter << 13;
        self.jitter ^= self.jitter >> 7;
        self.jitter ^= self.jitter << 17;
        let base = self.current;
        let cut = base.as_millis() as u64 / 4;
        let delay = base - Duration::from_millis(if cut == 0 { 0 } else { self.jitter % cut });
        self.current = (self.current * 2).min(self.max);
        delay
    }

    pub fn reset(&mut self) {
        self.current = self.initial;
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
}
