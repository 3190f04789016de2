//! Each principal's limits (`mcp --listen`): requests in flight and requests a minute, counted
//! per token subject (per client address without tokens of their own), so that twenty
//! assistants behind one address are twenty principals. Pure bookkeeping: the gate
//! (`super`) says the refusal.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// Whom the limits count: the token's subject, or where the request came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Who {
    Subject(String),
    Address(IpAddr),
}

impl std::fmt::Display for Who {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Who::Subject(sub) => write!(f, "{sub}"),
            Who::Address(ip) => write!(f, "{ip}"),
        }
    }
}

/// Principals kept before those idle since an earlier minute are forgotten.
const USED_KEPT: usize = 1024;

/// What one principal has used.
#[derive(Default)]
struct Use {
    in_flight: usize,
    /// The minute counted, and the requests in it.
    minute: u64,
    this_minute: usize,
}

/// The limits, and what each principal has used.
pub(super) struct Limits {
    per_client: usize,
    per_minute: usize,
    used: Mutex<HashMap<Who, Use>>,
    started: Instant,
}

impl Limits {
    /// Requests `who` has in flight (what the tests look at).
    #[cfg(test)]
    pub(super) fn in_flight(&self, who: &Who) -> usize {
        let used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        used.get(who).map_or(0, |u| u.in_flight)
    }

    /// At most `per_client` in flight and `per_minute` a minute (each at least 1).
    pub(super) fn new(per_client: usize, per_minute: usize) -> Limits {
        Limits {
            per_client: per_client.max(1),
            per_minute: per_minute.max(1),
            used: Mutex::new(HashMap::new()),
            started: Instant::now(),
        }
    }

    /// Minutes since the server started: the limits' window.
    fn minute(&self) -> u64 {
        self.started.elapsed().as_secs() / 60
    }

    pub(super) fn slot(&self, who: &Who) -> Result<Slot<'_>, Limit> {
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        let minute = self.minute();
        // Principals neither in flight nor counted this minute are forgotten, so that many
        // addresses or subjects passing by cannot grow the map without end.
        if used.len() > USED_KEPT {
            used.retain(|_, u| u.in_flight > 0 || u.minute == minute);
        }
        let u = used.entry(who.clone()).or_default();
        if u.minute != minute {
            u.minute = minute;
            u.this_minute = 0;
        }
        if u.in_flight >= self.per_client {
            return Err(Limit::InFlight(self.per_client));
        }
        if u.this_minute >= self.per_minute {
            let again_in = 60 - self.started.elapsed().as_secs() % 60;
            return Err(Limit::PerMinute {
                max: self.per_minute,
                again_in,
            });
        }
        u.in_flight += 1;
        u.this_minute += 1;
        Ok(Slot {
            limits: self,
            who: who.clone(),
        })
    }
}

/// A request in flight from one principal; let go when answered.
pub(super) struct Slot<'a> {
    limits: &'a Limits,
    who: Who,
}

/// Which of a principal's limits a request is past.
pub(super) enum Limit {
    InFlight(usize),
    PerMinute { max: usize, again_in: u64 },
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut used = self
            .limits
            .used
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(u) = used.get_mut(&self.who) {
            u.in_flight -= 1;
            let minute = self.limits.minute();
            if u.in_flight == 0 && u.minute != minute {
                used.remove(&self.who);
            }
        }
    }
}

impl Limit {
    /// What a refused request is told, naming `who`, and in how many seconds to come back.
    pub(super) fn said(&self, who: &Who) -> (String, u64) {
        match self {
            Limit::InFlight(max) => (
                format!(
                    "too many requests at once from {}: {max} in flight at most\n",
                    said_who(who)
                ),
                1,
            ),
            Limit::PerMinute { max, again_in } => (
                format!(
                    "too many requests from {}: {max} a minute at most; again in {again_in} s\n",
                    said_who(who)
                ),
                *again_in,
            ),
        }
    }
}

fn said_who(who: &Who) -> String {
    match who {
        Who::Subject(sub) => format!("{sub:?}"),
        Who::Address(_) => "this address".to_string(),
    }
}
