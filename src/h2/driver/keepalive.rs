//! Keep-alive and idling: a quiet connection is pinged, one whose ping goes unanswered is dead,
//! and one without requests for long enough closes.

use std::io;
use std::task::Context;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;

use super::super::conn::{Broken, Why};
use super::super::frame;
use super::{Driver, Fatal};

/// A connection that has heard nothing for this long is pinged... A server can go silent with
/// its TCP still open — hung, or a proxy in front of it that still acknowledges segments — and
/// the socket's TCP keep-alive (the dialer's: 30 s, then 2 probes 5 s apart) cannot see that:
/// only an answer from the server itself can. Its watches are then as good as gone, and the
/// cluster should not be shown live for long: a connection quiet for 10 s is pinged, and found
/// dead 5 s later, so a silent server is found within [`SILENT_DEADLINE`] of its last frame
/// (client-go pings after 30 s and waits 15 s). An API server sends each watch a bookmark once
/// a minute (kubernetes/kubernetes#90249), so a watched connection is pinged about five times a
/// minute: a wake-up and a TLS record each way, a few microseconds of CPU — 200 pings a second
/// at 2,000 clusters.
pub(crate) const KEEPALIVE: Duration = Duration::from_secs(10);
/// ...and is dead when the ping goes unanswered for this long.
const PING_TIMEOUT: Duration = Duration::from_secs(5);
/// How long after its last frame a server that went silent is found: its connection fails
/// with [`Why::PingUnanswered`](super::super::Why).
pub const SILENT_DEADLINE: Duration =
    Duration::from_secs(KEEPALIVE.as_secs() + PING_TIMEOUT.as_secs());
/// A connection without a request for this long closes (a later request opens another).
const IDLE: Duration = Duration::from_secs(90);

impl<T: AsyncRead + AsyncWrite + Unpin> Driver<T> {
    /// The server was heard from: the keep-alive waits from now. Moving a pending timer later
    /// is one atomic store in tokio's timer (the wheel re-files it when its old time comes),
    /// so a connection that hears bookmarks is not woken once a minute to move it. While a
    /// ping is out only its answer counts.
    pub(super) fn heard(&mut self) {
        let now = Instant::now();
        self.last_heard = now;
        if self.ping.is_none() {
            self.keepalive.as_mut().reset(now + KEEPALIVE);
        }
    }

    /// Keep-alive and idling; true when it queued a ping.
    pub(super) fn tick(&mut self, cx: &mut Context<'_>) -> Result<bool, Fatal> {
        if self.keepalive.as_mut().poll(cx).is_pending() {
            return Ok(false);
        }
        let now = Instant::now();
        if self.ping.is_some() {
            return Err(Fatal::quiet(Broken::new(
                io::ErrorKind::TimedOut,
                Why::PingUnanswered,
                format!(
                    "the server {} did not answer a ping within {}s",
                    self.conn.server,
                    PING_TIMEOUT.as_secs()
                ),
            )));
        }
        if self
            .idle_since
            .is_some_and(|since| now.duration_since(since) >= IDLE)
        {
            return Err(Fatal::quiet(Broken::new(
                io::ErrorKind::ConnectionAborted,
                Why::Closed,
                "the connection idled out",
            )));
        }
        if now.duration_since(self.last_heard) >= KEEPALIVE {
            self.pings_sent = self.pings_sent.wrapping_add(1);
            let payload = u64::from(self.pings_sent).to_be_bytes();
            frame::put(&mut self.out, frame::PING, 0, 0, &payload);
            self.ping = Some(payload);
            self.keepalive.as_mut().reset(now + PING_TIMEOUT);
            return Ok(true);
        }
        self.keepalive.as_mut().reset(self.last_heard + KEEPALIVE);
        Ok(true)
    }
}
