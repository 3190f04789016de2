//! One task per cluster: credentials → client → discovery → watches (in `watch.rs`), turning
//! everything into [`Event`]s — object summaries and the cluster's connection state. A failure
//! stays inside its cluster: it is reported, backed off and retried, and nothing else waits.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use kube::config::{ExecAuthCluster, KubeConfigOptions};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::api::{Http, Trouble};
use super::backoff::Backoff;
use super::discovery::{Served, discover};
use super::errors::{self, Failure};
use super::exec;
use super::reader::Clients;
use super::reporter::{Closed, Reporter};
use super::transport::{self, Protocol, Transport};
use super::watch::watch;
use crate::fleet::{Connection, FluxKind, Phase};
use crate::inventory::ClusterSpec;
use crate::source::Sink;

/// What every cluster task shares.
pub struct Shared {
    pub transport: Transport,
    pub exec: exec::Runner,
    /// Clusters connecting at once.
    pub connecting: Semaphore,
    pub kinds: Vec<FluxKind>,
    pub connect_timeout: Duration,
    pub max_backoff: Duration,
    /// Objects per list page.
    pub chunk_size: usize,
    /// Objects of one kind one cluster may hold.
    pub max_objects: usize,
    /// How often a cluster's FluxReport is read.
    pub report_interval: Duration,
    pub events: Sink,
    /// Connected clusters, for one-off reads.
    pub clients: Arc<Clients>,
    /// Clusters are counted from their FluxReports (`engine.watch`); only the open ones have
    /// their objects watched.
    pub summary: bool,
    /// The summarized clusters open now.
    pub warm: Arc<super::warm::Warm>,
}

impl Shared {
    /// What the tasks of `clusters` clusters share.
    pub fn new(
        settings: &crate::config::Engine,
        events: Sink,
        clients: Arc<Clients>,
        clusters: usize,
        summary: bool,
    ) -> Shared {
        Shared {
            transport: Transport {
                tls: transport::TlsCache::new(clusters),
                connect_timeout: settings.connect_timeout,
                env_proxy: hyper_util::client::proxy::matcher::Matcher::from_env(),
            },
            exec: exec::Runner::new(settings.exec_concurrency, settings.exec_timeout),
            connecting: Semaphore::new(settings.connect_concurrency.max(1)),
            kinds: settings.kinds.clone(),
            connect_timeout: settings.connect_timeout,
            max_backoff: settings.max_backoff,
            chunk_size: settings.chunk_size,
            max_objects: settings.max_objects,
            report_interval: settings.report_interval,
            events,
            clients,
            summary,
            warm: Arc::new(super::warm::Warm::new(settings.warm_clusters)),
        }
    }
}

/// How one connection attempt ended.
enum Attempt {
    Connected(Connected),
    Failed(Failure),
    NotHttp2,
    NoFlux,
}

pub(super) struct Connected {
    pub http: Http,
    pub served: Vec<Served>,
    /// The Flux Operator's kinds are served: its report is read every `report_interval`.
    pub operator: bool,
    pub protocol: &'static str,
    /// When the exec credential runs out: reconnect before then.
    pub expires: Option<Timestamp>,
}

/// Why watching stopped.
pub(super) enum Ended {
    /// Reconnect from scratch (new credentials, new discovery) after backing off.
    Reconnect(Failure),
    /// The credentials are about to expire: reconnect now with fresh ones, no backoff.
    Renew,
    Closed,
}

/// Runs until `cancel` fires or the events receiver is dropped.
pub async fn run(spec: ClusterSpec, shared: Arc<Shared>, cancel: CancellationToken) {
    let reporter = Reporter::new(&spec, shared.events.clone());
    // Held, not copied: a plugin the user runs on this cluster gets its kubeconfig from here.
    let spec = Arc::new(spec);
    let _held = shared.clients.hold(&spec);
    tokio::select! {
        _ = cancel.cancelled() => {}
        _ = lifecycle(reporter, &spec, &shared) => {}
    }
}

async fn lifecycle(
    mut reporter: Reporter,
    spec: &ClusterSpec,
    shared: &Arc<Shared>,
) -> Result<(), Closed> {
    // Not provisioned (or paused, deleting, failed) in Cluster API: say so, do not connect.
    if let Some(found) = &spec.discovered
        && !found.lifecycle.connectable()
    {
        use crate::inventory::capi::Lifecycle;
        let (phase, message) = match &found.lifecycle {
            Lifecycle::Provisioning => (
                Phase::Provisioning,
                "Cluster API is still provisioning it".to_string(),
            ),
            Lifecycle::Paused => (Phase::Paused, "paused in Cluster API".to_string()),
            Lifecycle::Deleting => (Phase::Deleting, "Cluster API is deleting it".to_string()),
            Lifecycle::Failed(why) => (Phase::ProvisionFailed, format!("Cluster API: {why}")),
            Lifecycle::Provisioned => (Phase::Connecting, String::new()),
        };
        let mut state = Connection::new(phase);
        state.error = Some(message.into());
        reporter.connection(state).await?;
        std::future::pending::<()>().await;
    }
    // Boxed: a task waits in one of the two, and a summarized one should not carry the other's
    // state (thousands of idle tasks).
    if shared.summary {
        let opened = shared.warm.register(reporter.key());
        return Box::pin(super::summary::summarized(
            &mut reporter,
            spec,
            shared,
            opened,
        ))
        .await;
    }
    Box::pin(watched(&mut reporter, spec, shared)).await
}

/// The protocol to try first: HTTP/2 where TLS can offer it.
pub(super) fn first_protocol(spec: &ClusterSpec) -> Protocol {
    if spec.server.starts_with("https://") {
        Protocol::Http2
    } else {
        Protocol::Http1
    }
}

/// Connects and watches every served kind, reconnecting after failures with backoff, for as
/// long as it is polled.
pub(super) async fn watched(
    reporter: &mut Reporter,
    spec: &ClusterSpec,
    shared: &Arc<Shared>,
) -> Result<(), Closed> {
    let mut protocol = first_protocol(spec);
    let mut backoff = Backoff::new(Duration::from_secs(1), shared.max_backoff, reporter.seed());
    loop {
        let mut connecting = Connection::new(Phase::Connecting);
        connecting.error = reporter.state().error.clone();
        reporter.connection(connecting).await?;
        let Ok(permit) = shared.connecting.acquire().await else {
            return Err(Closed);
        };
        // Boxed: a watching task should not carry the room connecting took.
        let failure = match Box::pin(attempt(spec, shared, protocol)).await {
            Attempt::NotHttp2 => {
                protocol = Protocol::Http1;
                continue;
            }
            Attempt::NoFlux => {
                // Never hold a connecting slot while waiting: others go ahead meanwhile.
                drop(permit);
                let failure = Failure::new(
                    Phase::FluxNotInstalled,
                    "the server serves none of the watched Flux kinds",
                );
                reporter.failed(&failure, shared.max_backoff).await?;
                tokio::time::sleep(shared.max_backoff).await;
                continue;
            }
            Attempt::Failed(failure) => {
                drop(permit);
                failure
            }
            Attempt::Connected(connected) => {
                // The slot stays taken until the first lists are in: bounded concurrency there
                // bounds the memory the initial lists need at once.
                match watch(reporter, connected, shared, &mut backoff, permit).await {
                    Ended::Closed => return Err(Closed),
                    Ended::Renew => continue,
                    Ended::Reconnect(failure) => {
                        if failure.phase == Phase::Unauthorized
                            && let Some(exec) = exec_of(spec)
                        {
                            shared.exec.invalidate(exec);
                        }
                        failure
                    }
                }
            }
        };
        let delay = backoff.next_delay();
        tracing::debug!(cluster = %spec.name, phase = %failure.phase, error = %failure.message, ?delay, "backing off");
        reporter.failed(&failure, delay).await?;
        tokio::time::sleep(delay).await;
    }
}

fn exec_of(spec: &ClusterSpec) -> Option<&kube::config::ExecConfig> {
    spec.kubeconfig
        .auth_infos
        .first()?
        .auth_info
        .as_ref()?
        .exec
        .as_ref()
}

/// One connection attempt. The caller holds a connecting slot. An exec plugin has its own
/// deadline (`exec_timeout`); the connection has `connect_timeout` after it.
async fn attempt(spec: &ClusterSpec, shared: &Arc<Shared>, protocol: Protocol) -> Attempt {
    let (kubeconfig, expires) = match credentials(spec, shared).await {
        Ok(found) => found,
        Err(failure) => return Attempt::Failed(failure),
    };
    let connecting = connect(spec, kubeconfig, expires, shared, protocol);
    match tokio::time::timeout(shared.connect_timeout, connecting).await {
        Ok(outcome) => outcome,
        Err(_) => Attempt::Failed(Failure::new(
            Phase::TimedOut,
            format!(
                "no answer within {}",
                crate::units::format_duration(shared.connect_timeout)
            ),
        )),
    }
}

/// Credentials (running an exec plugin if needed), then the HTTP service for `spec`; also when
/// the credentials expire. No request is sent yet.
pub(super) async fn client(
    spec: &ClusterSpec,
    shared: &Arc<Shared>,
    protocol: Protocol,
) -> Result<(Http, Option<Timestamp>), Failure> {
    let (kubeconfig, expires) = credentials(spec, shared).await?;
    Ok((build(spec, kubeconfig, shared, protocol).await?, expires))
}

/// `spec`'s kubeconfig with the exec plugin's credential in place of the plugin, and when that
/// credential expires.
async fn credentials(
    spec: &ClusterSpec,
    shared: &Arc<Shared>,
) -> Result<(kube::config::Kubeconfig, Option<Timestamp>), Failure> {
    let mut kubeconfig = spec.kubeconfig.clone();
    let mut expires = None;
    if let Some(auth) = kubeconfig
        .auth_infos
        .first_mut()
        .and_then(|a| a.auth_info.as_mut())
        && let Some(path) = auth.token_file.take()
    {
        auth.token = Some(token_file(std::path::Path::new(&path)).await?);
    }
    let cluster = kubeconfig
        .clusters
        .first()
        .and_then(|c| c.cluster.clone())
        .unwrap_or_default();
    if let Some(auth) = kubeconfig
        .auth_infos
        .first_mut()
        .and_then(|a| a.auth_info.as_mut())
        && let Some(exec) = auth.exec.as_mut()
    {
        if exec.provide_cluster_info {
            match ExecAuthCluster::try_from(&cluster) {
                Ok(c) => exec.cluster = Some(c),
                Err(e) => {
                    return Err(Failure::new(
                        Phase::Invalid,
                        format!("cluster info for the exec plugin: {e}"),
                    ));
                }
            }
        }
        match shared.exec.credential(exec).await {
            Ok(credential) => {
                expires = credential.expires;
                credential.apply(auth);
            }
            Err(message) => return Err(Failure::new(Phase::Unauthorized, message)),
        }
    }
    Ok((kubeconfig, expires))
}

/// Tokens longer than this are not tokens.
const TOKEN_FILE_LIMIT: u64 = 64 * 1024;

/// A `tokenFile`'s token, read as kubectl reads it: surrounding whitespace trimmed (what
/// `echo $TOKEN > file` leaves). Read at every connect, so a rotated token is picked up.
async fn token_file(path: &std::path::Path) -> Result<secrecy::SecretString, Failure> {
    let invalid = |why: String| {
        Failure::new(
            Phase::Invalid,
            format!("tokenFile {}: {why}", path.display()),
        )
    };
    let size = tokio::fs::metadata(path)
        .await
        .map_err(|e| invalid(e.to_string()))?
        .len();
    if size > TOKEN_FILE_LIMIT {
        return Err(invalid(format!("{size} bytes; a token is at most 64 KiB")));
    }
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| invalid(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| invalid("not UTF-8 text".into()))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(invalid("empty".into()));
    }
    // A line break or control character inside cannot go into an Authorization header.
    if token.chars().any(char::is_control) {
        return Err(invalid(
            "holds more than one line; a token is one line".into(),
        ));
    }
    Ok(token.to_string().into())
}

/// The HTTP service for `spec` with `kubeconfig`'s credentials.
async fn build(
    spec: &ClusterSpec,
    kubeconfig: kube::config::Kubeconfig,
    shared: &Arc<Shared>,
    protocol: Protocol,
) -> Result<Http, Failure> {
    let cluster = kubeconfig
        .clusters
        .first()
        .and_then(|c| c.cluster.clone())
        .unwrap_or_default();
    let options = KubeConfigOptions {
        context: Some(spec.context.clone()),
        ..Default::default()
    };
    let config = match kube::Config::from_custom_kubeconfig(kubeconfig, &options).await {
        Ok(config) => config,
        Err(e) => {
            return Err(Failure::new(
                Phase::Invalid,
                crate::errors::redacted(&crate::errors::chain(&e)),
            ));
        }
    };
    let proxy = match super::proxy::proxy_for(
        cluster.proxy_url.as_deref(),
        &config.cluster_url,
        &shared.transport.env_proxy,
    ) {
        Ok(proxy) => proxy,
        Err(message) => return Err(Failure::new(Phase::Invalid, message)),
    };
    let identity = super::identity::load(&config.auth_info)
        .map_err(|message| Failure::new(Phase::Invalid, message))?;
    // Building a client parses certificates (microseconds) and, once for the fleet, the system
    // trust store. Legacy auth providers (gcp) may run a command: only those go to a thread.
    let client = if config.auth_info.auth_provider.is_some() {
        let building = shared.clone();
        tokio::task::spawn_blocking(move || {
            building
                .transport
                .client(&config, identity, proxy, protocol)
        })
        .await
        .unwrap_or_else(|e| {
            Err(kube::Error::Service(
                format!("building the client: {e}").into(),
            ))
        })
    } else {
        shared.transport.client(&config, identity, proxy, protocol)
    };
    client.map_err(|e| errors::of_kube(&e))
}

async fn connect(
    spec: &ClusterSpec,
    kubeconfig: kube::config::Kubeconfig,
    expires: Option<Timestamp>,
    shared: &Arc<Shared>,
    protocol: Protocol,
) -> Attempt {
    let http = match build(spec, kubeconfig, shared, protocol).await {
        Ok(http) => http,
        Err(failure) => return Attempt::Failed(failure),
    };
    match discover(&http, &shared.kinds).await {
        Ok(found) if found.served.is_empty() => Attempt::NoFlux,
        Ok(found) => Attempt::Connected(Connected {
            http,
            served: found.served,
            operator: found.operator,
            protocol: match found.protocol {
                http::Version::HTTP_2 => Protocol::Http2.as_str(),
                _ => Protocol::Http1.as_str(),
            },
            expires,
        }),
        Err(Trouble::NotHttp2) => Attempt::NotHttp2,
        Err(trouble) => Attempt::Failed(trouble.into_failure()),
    }
}
