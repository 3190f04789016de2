//! `fluxfleet mcp`: the fleet for assistants — a Model Context Protocol server over stdio, on the
//! same session as every command (kubeconfigs and management clusters, or `--nats`). The
//! session keeps running while the client is connected; each tool call reads the index as it
//! is then ([`tools`]), a page at a time ([`page`]).
//!
//! Stdout is the protocol's: nothing else is ever written there (warnings and logs go to
//! stderr).

mod page;
mod proposing;
mod state;
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
        Some(expiry) => match crate::proposals::Store::default_place() {
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
    let applier = tokio::spawn(apply(index.clone(), events, settle, awaited));
    let fleet = state::Fleet::new(state::State {
        index,
        settled,
        reader,
        config,
        timeout: request.timeout,
        started: std::time::Instant::now(),
        nats: request.sources.nats.clone(),
        writes,
        proposing,
    });
    let code = match fleet.serve(rmcp::transport::stdio()).await {
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
    };
    applier.abort();
    running.shutdown().await;
    code
}

/// Applies the sources' events to the index as they arrive, saying when every cluster has
/// answered once, and telling about requested reconciles once the index shows them handled. The
/// lock is held for one batch at a time.
async fn apply(
    index: Arc<RwLock<Index>>,
    mut events: mpsc::Receiver<Event>,
    settled: watch::Sender<bool>,
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
        drop(written);
        if let (Some(awaited), Ok(index)) = (&awaited, index.read()) {
            awaited.tell(&index);
        }
    }
}
