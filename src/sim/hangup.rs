//! A cluster's faults on its connections rather than its requests: a server told to stop
//! (`drain`: GOAWAY on every connection, new ones refused, open streams closed after a while),
//! a replica going away behind a load balancer (`handover`: GOAWAY, new connections served) and
//! a hung server (`silent`: nothing read or written, nothing closed).
//!
//! GOAWAY is hyper's graceful shutdown of a connection, which on HTTP/2 is the h2 crate's — as
//! Go's server does it: GOAWAY with the highest stream id and a PING, then, once the PING is
//! answered, GOAWAY with the last stream it took; the streams it took are served on.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::CancellationToken;

use super::world::{Cluster, World};

/// How often a silent connection looks whether its fault was lifted.
const RECHECK: Duration = Duration::from_millis(250);

/// The cluster a connection serves, once known: from its own port at once, or from the TLS
/// server name (`<cluster>.clusters.fluxfleet.sim`) once the handshake is done.
pub type Target = Arc<OnceLock<Arc<Cluster>>>;

/// The cluster a TLS server name names, if any.
pub fn named(world: &World, server_name: Option<&str>) -> Option<Arc<Cluster>> {
    let name = server_name?.strip_suffix(super::tls::CLUSTER_DOMAIN)?;
    world.cluster(name.strip_suffix('.')?).cloned()
}

/// A connection's socket that reads and writes nothing while its cluster is `silent`, and
/// closes nothing either: the peer sees a connection that is open and dead.
pub struct Quiet<T> {
    io: T,
    target: Target,
    reading: Option<Pin<Box<Sleep>>>,
    writing: Option<Pin<Box<Sleep>>>,
}

impl<T> Quiet<T> {
    pub fn new(io: T, target: Target) -> Quiet<T> {
        Quiet {
            io,
            target,
            reading: None,
            writing: None,
        }
    }
}

/// Whether `target` is silent now; if so, `recheck` wakes the caller a little later to look
/// again.
fn hung(target: &Target, recheck: &mut Option<Pin<Box<Sleep>>>, cx: &mut Context<'_>) -> bool {
    let silent = target
        .get()
        .is_some_and(|c| c.silent.load(Ordering::Relaxed));
    if !silent {
        *recheck = None;
        return false;
    }
    let sleep = recheck.get_or_insert_with(|| Box::pin(tokio::time::sleep(RECHECK)));
    while sleep.as_mut().poll(cx).is_ready() {
        sleep.as_mut().reset(Instant::now() + RECHECK);
    }
    true
}

impl<T: AsyncRead + Unpin> AsyncRead for Quiet<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if hung(&this.target, &mut this.reading, cx) {
            return Poll::Pending;
        }
        Pin::new(&mut this.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Quiet<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if hung(&this.target, &mut this.writing, cx) {
            return Poll::Pending;
        }
        Pin::new(&mut this.io).poll_write(cx, data)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if hung(&this.target, &mut this.writing, cx) {
            return Poll::Pending;
        }
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if hung(&this.target, &mut this.writing, cx) {
            return Poll::Pending;
        }
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

/// When a connection to `cluster` opened at `opened` is sent GOAWAY, and how long its open
/// streams are kept after: at once while the server drains; with a handover, at once when it
/// opened before the fault began, else once it is the fault's while old; otherwise never.
fn goaway_due(cluster: &Cluster, opened: Instant) -> Option<(Instant, Duration)> {
    let faults = cluster.faults();
    if let Some(keep) = faults.drain {
        return Some((Instant::now(), keep));
    }
    let period = faults.handover?;
    let began = *cluster.faults_set.borrow();
    let at = if opened < began {
        Instant::now()
    } else {
        opened + period
    };
    Some((at, period))
}

/// Serves `conn` (hyper's connection future, HTTP/2 or HTTP/1.1) until it ends or the
/// simulator stops, sending GOAWAY (`graceful`) when the cluster's faults say, and dropping the
/// connection the fault's while later if its streams are still open.
pub async fn serve<F>(
    mut conn: Pin<&mut F>,
    graceful: impl Fn(Pin<&mut F>),
    cluster: Option<Arc<Cluster>>,
    shutdown: &CancellationToken,
) -> Result<(), hyper::Error>
where
    F: Future<Output = Result<(), hyper::Error>>,
{
    let opened = Instant::now();
    let mut faults = cluster.as_ref().map(|c| c.faults_set.subscribe());
    let mut closing: Option<Instant> = None;
    loop {
        let due = match (&cluster, closing) {
            (Some(c), None) => goaway_due(c, opened),
            _ => None,
        };
        let changed = async {
            if let Some(rx) = faults.as_mut()
                && rx.changed().await.is_ok()
            {
                return;
            }
            std::future::pending::<()>().await
        };
        tokio::select! {
            ended = conn.as_mut() => return ended,
            _ = shutdown.cancelled() => return Ok(()),
            () = changed => {}
            () = sleep_until(due.map(|(at, _)| at)) => {
                if let (Some(c), Some((_, keep))) = (&cluster, due) {
                    c.counters.goaways.fetch_add(1, Ordering::Relaxed);
                    graceful(conn.as_mut());
                    closing = Some(Instant::now() + keep);
                }
            }
            // The server stops: what is still open is cut.
            () = sleep_until(closing) => return Ok(()),
        }
    }
}

/// Sleeps until `at`, or forever.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// A cluster's own port while its server drains: closed (connections refused) until the fault
/// is lifted, then listened on again at the same address. None when the simulator stops or
/// the address cannot be had again.
pub async fn closed_while_draining(
    listener: TcpListener,
    cluster: &Cluster,
    shutdown: &CancellationToken,
) -> Option<TcpListener> {
    if !cluster.refuses() {
        return Some(listener);
    }
    let addr = listener.local_addr().ok()?;
    drop(listener);
    let mut faults = cluster.faults_set.subscribe();
    while cluster.refuses() {
        tokio::select! {
            changed = faults.changed() => changed.ok()?,
            _ = shutdown.cancelled() => return None,
        }
    }
    match TcpListener::bind(addr).await {
        Ok(listener) => Some(listener),
        Err(e) => {
            tracing::warn!("sim: cannot listen on {addr} again after a drain: {e}");
            None
        }
    }
}
