//! `fluxfleet mcp`: the fleet for assistants — a Model Context Protocol server over stdio, on the
//! same session as every command (kubeconfigs and management clusters, or `--nats`). The
//! session keeps running while the client is connected; each tool call reads the index as it
//! is then ([`tools`]), a page at a time ([`page`]).
//!
//! Stdout is the protocol's: nothing else is ever written there (warnings and logs go to
//! stderr).

mod args;
mod asking;
pub mod http;
pub mod oauth;
mod page;
mod proposing;
mod state;
mod strict;
mod tools;
mod trace;
mod tree;
mod workloads;
mod writes;

use std::sync::{Arc, RwLock};
use std::time::Duration;

use rmcp::ServiceExt;
use tokio::sync::{mpsc, watch};

use crate::fleet::Index;
use crate::fleet::index::Event;
use crate::session::Session;
use crate::session::resolve::Sources;

/// What `mcp` was asked.
#[derive(Clone, Debug)]
pub struct Serve {
    pub sources: Sources,
    /// How long a call waits, at most, for the fleet's first answers (and an action for each
    /// reconcile to be handled).
    pub timeout: Duration,
    /// `--write`: the write tools exist (nothing else grants them, not the config's mode).
    pub write: bool,
    /// `--propose`: the write tools exist and make proposals a person decides, kept this long.
    pub propose: Option<Duration>,
    /// Proposals one person (their token's subject; else whoever the server runs as) may have
    /// pending at once.
    pub max_pending: usize,
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

/// What `fluxfleet mcp` says while it serves; the command line words it.
#[derive(Clone, Debug, PartialEq)]
pub enum McpSaid {
    /// A problem of the config, the inventory or the bus that leaves the rest working (server
    /// text, not yet escaped for a terminal).
    Warning(String),
    /// MCP is served over HTTP at this address; whether writes are proposals, or acts as each
    /// person asking.
    Serving {
        scheme: &'static str,
        addr: std::net::SocketAddr,
        proposes: bool,
        writes: bool,
    },
    /// A probe or metrics endpoint is served.
    Endpoint(crate::endpoints::Served),
}

/// Why `fluxfleet mcp` did not serve, or stopped serving: by what the user changes.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The fleet could not be opened (the config, the bus).
    #[error(transparent)]
    Open(#[from] crate::bus::BusError),
    /// No cluster to serve: the kubeconfigs or the bus hold none.
    #[error("{0}")]
    NoClusters(String),
    /// `--write` or `--propose` with guardrails that cannot be read exactly.
    #[error("{0}; the server was not started")]
    WritesRefused(String),
    /// `--propose` with nowhere to keep proposals.
    #[error("{0}; the server was not started")]
    Proposals(#[from] crate::proposals::StoreError),
    /// `--listen` could not start: the token file, the TLS files, the address.
    #[error("{0}; the server was not started")]
    Listen(#[from] http::ListenError),
    /// A probe or metrics address could not be listened on.
    #[error(transparent)]
    Endpoints(#[from] crate::endpoints::BindError),
    /// The client on stdio never started a session.
    #[error("the MCP client did not start a session: {0}")]
    Handshake(String),
    /// The session on stdio ended with an error.
    #[error("the MCP session ended: {0}")]
    Session(String),
}

/// `fluxfleet mcp`: serves until the client closes stdin (or, with `--listen`, until told to
/// stop), telling `said` what a person should see on the way.
pub async fn mcp(request: Serve, said: impl Fn(McpSaid)) -> Result<(), McpError> {
    let opened = crate::session::open::open(&request.sources).await?;
    for w in &opened.warnings {
        said(McpSaid::Warning(w.clone()));
    }
    if opened.fleet.is_empty() {
        return Err(McpError::NoClusters(opened.fleet.empty_why()));
    }
    let config = opened.config.clone();
    let writing = request.write || request.propose.is_some();
    if let (Some(why), true) = (config.writes_refused(), writing) {
        return Err(McpError::WritesRefused(why));
    }
    let grant = if request.write {
        let infos = opened.fleet.clusters();
        let (grant, permissions) = config.writable(Some(crate::config::Mode::Write), &infos);
        grant.map(|grant| (grant, permissions))
    } else {
        None
    };
    let proposing = match request.propose {
        None => None,
        Some(expiry) => {
            let store = crate::proposals::Keeper::of(request.sources.nats.as_ref()).await?;
            Some(state::Proposing {
                store,
                expiry,
                max_pending: request.max_pending,
            })
        }
    };
    // Following management clusters: clusters joining or leaving show up as they do.
    let live = Session::start(opened.fleet.sources(&config.engine, true));
    let reader = live.reader();
    let (index, events, running) = live.split();
    let impersonate = request.listen.as_ref().and_then(|l| match &l.http.auth {
        http::Auth::OAuth(settings) => settings.impersonate.clone(),
        http::Auth::TokenFile(_) => None,
    });
    let writes = grant.map(|(grant, permissions)| {
        let writer = running.writer(grant, permissions.clone());
        state::Writes::new(writer, permissions, impersonate)
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
    let fleet = state::FleetServer::new(state::State {
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
    let served = match &request.listen {
        None => stdio(fleet).await,
        Some(listening) => listen(fleet, listening, settled, &said).await,
    };
    applier.abort();
    running.shutdown().await;
    served
}

/// Serves one client on stdin and stdout until it closes them.
async fn stdio(fleet: state::FleetServer) -> Result<(), McpError> {
    let service = fleet
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| McpError::Handshake(e.to_string()))?;
    service
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| McpError::Session(e.to_string()))
}

/// Serves many clients over HTTP, with probes and metrics, until told to stop.
async fn listen(
    fleet: state::FleetServer,
    listening: &Listening,
    settled: watch::Receiver<bool>,
    said: &impl Fn(McpSaid),
) -> Result<(), McpError> {
    let proposes = fleet.state.proposing.is_some();
    let stop = &listening.stop;
    let serving = http::start(fleet, &listening.http, stop.clone()).await?;
    let status = Arc::new(Status {
        settled,
        counts: serving.counts.clone(),
    });
    let probes = (listening.metrics_addr, listening.health_addr);
    let endpoints = crate::endpoints::start(probes, status, stop)
        .await
        .inspect_err(|_| stop.cancel())?;
    for served in endpoints {
        said(McpSaid::Endpoint(served));
    }
    let scheme = if listening.http.tls.is_some() {
        "https"
    } else {
        "http"
    };
    said(McpSaid::Serving {
        scheme,
        addr: serving.addr,
        proposes,
        writes: listening.http.writes,
    });
    stop.cancelled().await;
    Ok(())
}

/// What `mcp --listen` tells its probes and Prometheus.
struct Status {
    settled: watch::Receiver<bool>,
    counts: Arc<http::RequestCounts>,
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
            ("forbidden", &c.forbidden),
            ("too_large", &c.too_large),
            ("busy", &c.busy),
            ("not_found", &c.not_found),
        ] {
            text.push_str(&format!(
                "fluxfleet_mcp_requests_total{{outcome=\"{outcome}\"}} {}\n",
                n.load(Relaxed)
            ));
        }
        text.push_str(
            "# HELP fluxfleet_mcp_principal_requests_total Requests to /mcp by whom (a token's \
             subject, or a client address) and what became of them.\n\
             # TYPE fluxfleet_mcp_principal_requests_total counter\n",
        );
        let principals = c
            .principals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut sorted: Vec<_> = principals.iter().collect();
        sorted.sort();
        for (who, (served, busy)) in sorted {
            // A token's words: escaped as the exposition format wants a label value.
            let who = who
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\n', "\\n");
            for (outcome, n) in [("served", served), ("busy", busy)] {
                text.push_str(&format!(
                    "fluxfleet_mcp_principal_requests_total{{principal=\"{who}\",outcome=\"{outcome}\"}} {n}\n"
                ));
            }
        }
        drop(principals);
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
