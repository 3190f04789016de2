//! `fluxfleet mcp`: the fleet for assistants — a Model Context Protocol server over stdio, on the
//! same session as every command (kubeconfigs and management clusters, or `--nats`). The
//! session keeps running while the client is connected; each tool call reads the index as it
//! is then ([`tools`]), a page at a time ([`page`]).
//!
//! Stdout is the protocol's: nothing else is ever written there (warnings and logs go to
//! stderr).

pub mod http;
mod page;
mod proposing;
mod state;
mod strict;
mod tools;
mod workloads;
mod writes;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use rmcp::ServiceExt;
use tokio::sync::{mpsc, watch};

use crate::export::request::exit;
use crate::fleet::Index;
use crate::fleet::index::Event;
use crate::session::Session;
use crate::session::resolve::Sources;

/// What `mcp` was asked.
#[derive(Clone, Debug)]
pub struct Request {
    pub sources: Sources,
    /// How long a call waits, at most, for the fleet's first answers (and an action for each
    /// reconcile to be handled).
    pub timeout: Duration,
    /// `--write`: the write tools exist (nothing else grants them, not the config's mode).
    pub write: bool,
    /// `--propose`: the write tools exist and make proposals a person decides, kept this long.
    pub propose: Option<Duration>,
    /// `--listen`: served over HTTP to many clients (until `stop`) instead of stdio to one.
    pub listen: Option<Listening>,
}

/// Serving over HTTP: how, the probes and metrics' addresses, and when to stop.
#[derive(Clone, Debug)]
pub struct Listening {
    pub http: http::Listen,
    pub metrics_addr: Option<std::net::SocketAddr>,
    pub health_addr: Option<std::net::SocketAddr>,
    pub stop: tokio_util::sync::CancellationToken,
}

/// `fluxfleet mcp`: serves until the client closes stdin.
pub async fn mcp(request: Request) -> u8 {
    let opened = match crate::session::open::open(&request.sources).await {
        Ok(opened) => opened,
        Err(e) => {
            eprintln!("error: {}", crate::export::table::safe(&e.to_string()));
            return exit::ERROR;
        }
    };
    for w in &opened.warnings {
        eprintln!("warning: {}", crate::export::table::safe(w));
    }
    if opened.fleet.is_empty() {
        eprintln!("error: {}", opened.fleet.empty_why());
        return exit::INVENTORY;
    }
    let config = opened.config.clone();
    let grant = if request.write {
        let infos = opened.fleet.clusters();
        let (grant, permissions) = config.writable(Some(crate::config::Mode::Write), &infos);
        match (config.writes_refused(), grant) {
            (Some(why), _) => {
                eprintln!("error: {why}; the server was not started");
                return exit::USAGE;
            }
            (None, Some(grant)) => Some((grant, permissions)),
            (None, None) => None,
        }
    } else {
        None
    };
    let proposing = match request.propose {
        None => None,
        Some(_) if config.writes_refused().is_some() => {
            let why = config.writes_refused().unwrap_or_default();
            eprintln!("error: {why}; the server was not started");
            return exit::USAGE;
        }
        Some(expiry) => match crate::proposals::Keeper::of(request.sources.nats.as_ref()).await {
            Ok(store) => Some(state::Proposing { store, expiry }),
            Err(e) => {
                eprintln!("error: {e}; the server was not started");
                return exit::USAGE;
            }
        },
    };
    // Following management clusters: clusters joining or leaving show up as they do.
    let live = Session::start(opened.fleet.sources(&config.engine, true));
    let reader = live.reader();
    let (index, events, running) = live.split();
    let writes = grant.map(|(grant, permissions)| {
        let writer = running.writer(grant, permissions.clone());
        state::Writes::new(writer, permissions)
    });
    let awaited = writes.as_ref().map(|w| w.awaited.clone());
    let index = Arc::new(RwLock::new(index));
    let (settle, settled) = watch::channel(false);
    let generation = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let applier = tokio::spawn(apply(
        index.clone(),
        events,
        (settle, generation.clone()),
        awaited,
    ));
    let fleet = state::Fleet::new(state::State {
        index,
        settled: settled.clone(),
        reader,
        config,
        timeout: request.timeout,
        started: std::time::Instant::now(),
        nats: request.sources.nats.clone(),
        writes,
        proposing,
        generation,
        root_causes: Default::default(),
    });
    let code = match &request.listen {
        None => stdio(fleet).await,
        Some(listening) => listen(fleet, listening, settled).await,
    };
    applier.abort();
    running.shutdown().await;
    code
}

/// Serves one client on stdin and stdout until it closes them.
async fn stdio(fleet: state::Fleet) -> u8 {
    match fleet.serve(rmcp::transport::stdio()).await {
        Ok(service) => match service.waiting().await {
            Ok(_) => exit::OK,
            Err(e) => {
                eprintln!("error: the MCP session ended: {e}");
                exit::ERROR
            }
        },
        Err(e) => {
            eprintln!("error: the MCP client did not start a session: {e}");
            exit::ERROR
        }
    }
}

/// Serves many clients over HTTP, with probes and metrics, until told to stop.
async fn listen(fleet: state::Fleet, listening: &Listening, settled: watch::Receiver<bool>) -> u8 {
    let proposes = fleet.state.proposing.is_some();
    let stop = &listening.stop;
    let serving = match http::start(fleet, &listening.http, stop.clone()).await {
        Ok(serving) => serving,
        Err(e) => {
            eprintln!("error: {e}; the server was not started");
            return exit::USAGE;
        }
    };
    let status = Arc::new(Status {
        settled,
        counts: serving.counts.clone(),
    });
    let probes = (listening.metrics_addr, listening.health_addr);
    if let Err(e) = crate::endpoints::start("mcp", probes, status, stop).await {
        eprintln!("error: {e}");
        stop.cancel();
        return exit::USAGE;
    }
    let scheme = if listening.http.tls.is_some() {
        "https"
    } else {
        "http"
    };
    eprintln!(
        "fluxfleet mcp: serving MCP on {scheme}://{}/mcp ({})",
        serving.addr,
        if proposes {
            "read-only; writes are proposals"
        } else {
            "read-only"
        }
    );
    stop.cancelled().await;
    exit::OK
}

/// What `mcp --listen` tells its probes and Prometheus.
struct Status {
    settled: watch::Receiver<bool>,
    counts: Arc<http::Counts>,
}

/// Why `mcp --listen` is not ready.
#[derive(Debug, thiserror::Error)]
enum NotReady {
    #[error("starting: not every cluster has answered yet")]
    Starting,
}

impl crate::endpoints::Endpoints for Status {
    type NotReady = NotReady;

    fn healthz(&self) -> Result<(), NotReady> {
        Ok(())
    }

    fn readyz(&self) -> Result<(), NotReady> {
        match *self.settled.borrow() {
            true => Ok(()),
            false => Err(NotReady::Starting),
        }
    }

    fn metrics(&self) -> String {
        use std::sync::atomic::Ordering::Relaxed;
        let c = &self.counts;
        let mut text = String::from(
            "# HELP fluxfleet_mcp_requests_total Requests to /mcp over HTTP, by what became of them.\n\
             # TYPE fluxfleet_mcp_requests_total counter\n",
        );
        for (outcome, n) in [
            ("served", &c.served),
            ("unauthorized", &c.unauthorized),
            ("too_large", &c.too_large),
            ("busy", &c.busy),
            ("not_found", &c.not_found),
        ] {
            text.push_str(&format!(
                "fluxfleet_mcp_requests_total{{outcome=\"{outcome}\"}} {}\n",
                n.load(Relaxed)
            ));
        }
        text.push_str(&format!(
            "# HELP fluxfleet_mcp_ready Whether every cluster has answered once.\n\
             # TYPE fluxfleet_mcp_ready gauge\nfluxfleet_mcp_ready {}\n",
            u8::from(*self.settled.borrow())
        ));
        text
    }
}

/// Applies the sources' events to the index as they arrive, saying when every cluster has
/// answered once, and telling about requested reconciles once the index shows them handled. The
/// lock is held for one batch at a time.
async fn apply(
    index: Arc<RwLock<Index>>,
    mut events: mpsc::Receiver<Event>,
    (settled, generation): (watch::Sender<bool>, Arc<std::sync::atomic::AtomicU64>),
    awaited: Option<Arc<state::Awaited>>,
) {
    let mut batch = Vec::with_capacity(1024);
    loop {
        if !*settled.borrow()
            && let Ok(index) = index.read()
            && index.settled()
        {
            settled.send_replace(true);
        }
        if events.recv_many(&mut batch, 1024).await == 0 {
            return;
        }
        let Ok(mut written) = index.write() else {
            return;
        };
        for event in batch.drain(..) {
            written.apply(event);
        }
        generation.fetch_add(1, std::sync::atomic::Ordering::Release);
        drop(written);
        if let (Some(awaited), Ok(index)) = (&awaited, index.read()) {
            awaited.tell(&index);
        }
    }
}
