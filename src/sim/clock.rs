//! Simulated time: a fixed epoch plus the time elapsed since start. Tests pin the epoch so that
//! timestamps in generated objects are reproducible.

use std::time::Instant;

#[derive(Clone, Debug)]
pub struct Clock {
    epoch: i64,
    started: Instant,
}

impl Clock {
    /// `epoch`: Unix seconds at start; None means the wall clock.
    pub fn new(epoch: Option<i64>) -> Clock {
        let epoch = epoch.unwrap_or_else(|| jiff::Timestamp::now().as_second());
        Clock {
            epoch,
            started: Instant::now(),
        }
    }

    pub fn now_seconds(&self) -> i64 {
        self.epoch + self.started.elapsed().as_secs() as i64
    }

    /// RFC 3339 at whole seconds, as Kubernetes writes `metav1.Time`.
    pub fn now(&self) -> String {
        format_seconds(self.now_seconds())
    }

    /// RFC 3339 `seconds` before start.
    pub fn before_start(&self, seconds: i64) -> String {
        format_seconds(self.epoch - seconds)
    }
}

fn format_seconds(s: i64) -> String {
    jiff::Timestamp::from_second(s)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_epoch_formats_like_kubernetes() {
        let c = Clock::new(Some(1_790_000_000));
        assert_eq!(c.before_start(0), "2026-09-21T14:13:20Z");
        assert_eq!(c.before_start(3600), "2026-09-21T13:13:20Z");
    }
}
