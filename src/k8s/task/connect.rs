//! Reaching a cluster: its credentials (running an exec plugin when it has one), its HTTP
//! service, and discovery of the Flux kinds it serves. What every cluster task shares is here too.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use kube::config::{ExecAuthCluster, KubeConfigOptions};
use tokio::sync::Semaphore;

use super::discovery::discover;
use crate::fleet::{FluxKind, Phase, ServedKind};
use crate::inventory::ClusterSpec;
use crate::k8s::clients::Clients;
use crate::k8s::wire::api::{Http, Reason, Trouble};
use crate::k8s::wire::errors::{self, Failure};
use crate::k8s::wire::exec;
use crate::k8s::wire::transport::{self, Protocol, Transport};
use crate::source::Sink;

/// What every cluster task shares.
pub struct TaskShared {
    pub transport: Transport,
    pub exec: exec::Runner,
    /// Clusters connecting at once.
    pub connecting: Semaphore,
    pub kinds: Vec<FluxKind>,
    pub connect_timeout: Duration,
    pub max_backoff: Duration,
    /// Objects per list page.
    pub chunk_size: usize,
    /// Kinds listed by streaming watches where the server serves them (`engine.lists`).
    pub streaming_lists: bool,
    /// Objects of one kind one cluster may hold.
    pub max_objects: usize,
    /// How often a cluster's FluxReport is read.
    pub report_interval: Duration,
    /// Each kind listed once, not watched (`engine.list_only`).
    pub list_only: bool,
    pub events: Sink,
    /// Connected clusters, for one-off reads.
    pub clients: Arc<Clients>,
    /// Clusters are counted from their FluxReports (`engine.watch`); only the open ones have
    /// their objects watched.
    pub summary: bool,
    /// The summarized clusters open now.
    pub warm: Arc<super::warm::Warm>,
}

impl TaskShared {
    /// What the tasks of `clusters` clusters share.
    pub fn new(
        settings: &crate::config::EngineSection,
        events: Sink,
        clients: Arc<Clients>,
        clusters: usize,
        summary: bool,
    ) -> TaskShared {
        TaskShared {
            transport: Transport::new(
                transport::TlsCache::new(clusters, summary),
                settings.connect_timeout,
                hyper_util::client::proxy::matcher::Matcher::from_env(),
            ),
            exec: exec::Runner::new(settings.exec_concurrency, settings.exec_timeout),
            connecting: Semaphore::new(settings.connect_concurrency.max(1)),
            kinds: settings.kinds.clone(),
            connect_timeout: settings.connect_timeout,
            max_backoff: settings.max_backoff,
            chunk_size: settings.chunk_size,
            streaming_lists: settings.streaming_lists,
            max_objects: settings.max_objects,
            report_interval: settings.report_interval,
            list_only: settings.list_only,
            events,
            clients,
            summary,
            warm: Arc::new(super::warm::Warm::new(settings.warm_clusters)),
        }
    }
}

/// How one connection attempt ended.
pub(in crate::k8s) enum Attempt {
    Connected(Connected),
    Failed(Failure),
    /// The server turned discovery away for now and said when to ask again (429 with
    /// `Retry-After`: API Priority and Fairness).
    Throttled(Failure, Duration),
    NotHttp2,
    NoFlux,
}

/// A cluster reached: its service and what it serves.
pub(in crate::k8s) struct Connected {
    pub http: Http,
    pub served: Arc<[ServedKind]>,
    /// The Flux Operator's kinds are served: its report is read, then watched.
    pub operator: bool,
    pub protocol: &'static str,
    /// When the exec credential runs out: reconnect before then.
    pub expires: Option<Timestamp>,
}

/// The protocol to try first: HTTP/2 where TLS can offer it.
pub(in crate::k8s) fn first_protocol(spec: &ClusterSpec) -> Protocol {
    if spec.server.starts_with("https://") {
        Protocol::Http2
    } else {
        Protocol::Http1
    }
}

pub(in crate::k8s) fn exec_of(spec: &ClusterSpec) -> Option<kube::config::ExecConfig> {
    spec.kubeconfig
        .kubeconfig()
        .auth_infos
        .into_iter()
        .next()?
        .auth_info?
        .exec
}

/// One connection attempt. The caller holds a connecting slot. An exec plugin has its own
/// deadline (`exec_timeout`); the connection has `connect_timeout` after it.
pub(in crate::k8s) async fn attempt(
    spec: &ClusterSpec,
    shared: &Arc<TaskShared>,
    protocol: Protocol,
) -> Attempt {
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

/// A connection of its own to `spec`'s cluster, for reads on demand, and the Flux kinds it
/// serves: credentials, client, discovery within `timeout` (HTTP/1.1 where the server does
/// not speak HTTP/2). Nothing registers it: it is closed when its last holder drops it.
pub(in crate::k8s) async fn on_demand(
    spec: &ClusterSpec,
    shared: &Arc<TaskShared>,
    timeout: Duration,
) -> Result<(Http, Arc<[ServedKind]>), crate::fleet::read::ReadError> {
    use crate::fleet::read::ReadError;
    let unreachable =
        |message: String| ReadError::Unreachable(format!("connecting to {}: {message}", spec.name));
    let mut protocol = first_protocol(spec);
    loop {
        let (http, _) = client(spec, shared, protocol)
            .await
            .map_err(|f| unreachable(f.message))?;
        let discovered = tokio::time::timeout(timeout, discover(&http, &shared.kinds))
            .await
            .map_err(|_| ReadError::TimedOut(timeout))?;
        match discovered {
            Ok(found) => return Ok((http, found.served)),
            Err(Trouble::NotHttp2) if protocol == Protocol::Http2 => protocol = Protocol::Http1,
            Err(trouble) => return Err(unreachable(trouble.into_failure().message)),
        }
    }
}

/// Credentials (running an exec plugin if needed), then the HTTP service for `spec`; also when
/// the credentials expire. No request is sent yet.
pub(in crate::k8s) async fn client(
    spec: &ClusterSpec,
    shared: &Arc<TaskShared>,
    protocol: Protocol,
) -> Result<(Http, Option<Timestamp>), Failure> {
    let (kubeconfig, expires) = credentials(spec, shared).await?;
    Ok((build(spec, kubeconfig, shared, protocol).await?, expires))
}

/// `spec`'s kubeconfig with the exec plugin's credential in place of the plugin, and when that
/// credential expires.
async fn credentials(
    spec: &ClusterSpec,
    shared: &Arc<TaskShared>,
) -> Result<(kube::config::Kubeconfig, Option<Timestamp>), Failure> {
    let mut kubeconfig = spec.kubeconfig.kubeconfig();
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
            // Every failure of the plugin is the credentials' (a hung one often waits for a
            // login nobody will type): the task retries it with its backoff either way.
            Err(e) => return Err(Failure::new(Phase::Unauthorized, e.to_string())),
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
    shared: &Arc<TaskShared>,
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
    let proxy = match crate::k8s::wire::proxy::proxy_for(
        cluster.proxy_url.as_deref(),
        &config.cluster_url,
        &shared.transport.env_proxy,
    ) {
        Ok(proxy) => proxy,
        Err(e) => return Err(Failure::new(Phase::Invalid, e.to_string())),
    };
    let identity = crate::k8s::wire::identity::load(&config.auth_info)
        .map_err(|e| Failure::new(Phase::Invalid, e.to_string()))?;
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
    shared: &Arc<TaskShared>,
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
        Err(trouble) => match trouble.reason().and_then(Reason::retry_after) {
            Some(after) => Attempt::Throttled(trouble.into_failure(), after),
            None => Attempt::Failed(trouble.into_failure()),
        },
    }
}
