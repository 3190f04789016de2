//! A session: the fleet index and the sources that feed it, for the TUI and the headless
//! commands alike. Sources are registered once ([`Session::start`]); each gets its own
//! [`Sink`], the index gives every cluster its id, and reads and actions are routed to the
//! source each cluster comes from.

pub mod corrections;
pub mod drift;
pub mod evidence;
pub mod open;
pub mod resolve;
pub mod traced;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::config::{self, Permissions, WriteGrant};
use crate::fleet::index::Event;
use crate::fleet::read::ReadError;
use crate::fleet::verbs::{Outcome, Step};
use crate::fleet::{ClusterInfo, Index, ObjectEvent, ObjectKey, SourceId};
use crate::inventory::Inventory;
use crate::k8s::management::Management;
use crate::source::{Read, Sink, Source, Write};

/// Events in flight between the sources and the index. When the owner falls behind, the sources
/// wait (for the kube engine, HTTP/2 flow control holds the rest on the servers) instead of
/// memory growing.
const CHANNEL: usize = 4096;

pub use crate::fleet::read::READ_ONLY_CLUSTER;

/// The index and its running sources.
pub struct Session {
    pub index: Index,
    pub sources: Running,
    events: mpsc::Receiver<Event>,
    batch: Vec<Event>,
}

/// The registered sources, started.
pub struct Running {
    sources: Vec<Box<dyn Source>>,
}

impl Session {
    /// Registers `sources` (each one's clusters enter the index at once) and starts them.
    /// Must run inside a tokio runtime.
    pub fn start(mut sources: Vec<Box<dyn Source>>) -> Session {
        let (tx, events) = mpsc::channel(CHANNEL);
        let mut index = Index::new();
        for (i, source) in sources.iter_mut().enumerate() {
            let id = SourceId(i as u16);
            let clusters = source.clusters();
            index.reserve(clusters.len());
            for mut info in clusters {
                info.source = id;
                index.add_cluster(info);
            }
            source.start(Sink::new(id, tx.clone()));
        }
        Session {
            index,
            sources: Running { sources },
            events,
            batch: Vec::with_capacity(1024),
        }
    }

    /// The clusters of `inventory`, watched by the kube engine, following none of its
    /// management clusters.
    pub fn kube(inventory: &Inventory, settings: &config::EngineSection) -> Session {
        Session::start(sources(inventory, settings, &[]))
    }

    /// The index, the events for it, and the sources: for an owner that applies events itself
    /// (the TUI's event loop).
    pub fn split(self) -> (Index, mpsc::Receiver<Event>, Running) {
        (self.index, self.events, self.sources)
    }

    pub fn reader(&self) -> Reader {
        self.sources.reader()
    }

    /// Applies events until every cluster has answered once (live or failed) or `timeout`
    /// passes. Returns whether every cluster answered.
    pub async fn settle(&mut self, timeout: Duration) -> bool {
        self.apply_until(timeout, Index::settled).await;
        self.index.settled()
    }

    /// Applies whatever arrives during `window`.
    pub async fn pump(&mut self, window: Duration) {
        self.apply_until(window, |_| false).await;
    }

    /// Applies events in batches until `done` says so, `within` passes or every source stops.
    async fn apply_until(&mut self, within: Duration, done: impl Fn(&Index) -> bool) {
        let deadline = tokio::time::Instant::now() + within;
        while !done(&self.index) {
            tokio::select! {
                n = self.events.recv_many(&mut self.batch, 1024) => {
                    if n == 0 {
                        return;
                    }
                    for event in self.batch.drain(..) {
                        self.index.apply(event);
                    }
                }
                _ = tokio::time::sleep_until(deadline) => return,
            }
        }
    }

    /// Waits for the next batch of events and applies it; false once every source has stopped.
    pub async fn apply_batch(&mut self) -> bool {
        if self.events.recv_many(&mut self.batch, 1024).await == 0 {
            return false;
        }
        for event in self.batch.drain(..) {
            self.index.apply(event);
        }
        true
    }

    /// The next event, not yet applied (for callers that look at the change first).
    pub async fn next_event(&mut self) -> Option<Event> {
        self.events.recv().await
    }

    /// The events waiting (at least one, at most `limit`), not yet applied, into `into`; 0 once
    /// every source has stopped.
    pub async fn next_events(&mut self, into: &mut Vec<Event>, limit: usize) -> usize {
        self.events.recv_many(into, limit).await
    }

    pub async fn shutdown(self) {
        self.sources.shutdown().await;
    }
}

/// The sources of a fleet, registered in one place: the kube engine on `inventory`, following
/// the management clusters of `follow` while running.
pub fn sources(
    inventory: &Inventory,
    settings: &config::EngineSection,
    follow: &[Management],
) -> Vec<Box<dyn Source>> {
    let kube = crate::k8s::Kube::new(inventory, settings).following(follow);
    vec![Box::new(kube)]
}

impl Running {
    /// Reads objects from the clusters of every source that can.
    pub fn reader(&self) -> Reader {
        Reader {
            by_source: self.sources.iter().map(|s| s.reader()).collect(),
        }
    }

    /// Carries out actions, only with the proof that writes are enabled, and only on the
    /// clusters `permissions` make writable (checked again before every request).
    pub fn writer(&self, grant: WriteGrant, permissions: Permissions) -> Writer {
        Writer {
            by_source: self.sources.iter().map(|s| s.writer(&grant)).collect(),
            permissions,
        }
    }

    /// Stops every source and waits for them.
    pub async fn shutdown(mut self) {
        for source in &mut self.sources {
            source.stop().await;
        }
    }
}

/// Reads events and YAML from the source of each cluster. Cheap to clone; it has no way to
/// change anything.
#[derive(Clone)]
pub struct Reader {
    by_source: Arc<[Option<Arc<dyn Read>>]>,
}

impl Reader {
    /// The events of `objects` — an object, then what `flux events --for` shows beside it
    /// (`fleet::told_with`) — newest first.
    pub async fn events(
        &self,
        cluster: &ClusterInfo,
        objects: &[ObjectKey],
    ) -> Result<Vec<ObjectEvent>, ReadError> {
        self.of(cluster)?.events(&cluster.key, objects).await
    }

    /// The object as the cluster has it now.
    pub async fn object(
        &self,
        cluster: &ClusterInfo,
        object: &ObjectKey,
    ) -> Result<serde_json::Value, ReadError> {
        self.of(cluster)?.object(&cluster.key, object).await
    }

    /// The object as the cluster has it now, as YAML for a person.
    pub async fn yaml(
        &self,
        cluster: &ClusterInfo,
        object: &ObjectKey,
    ) -> Result<String, ReadError> {
        self.object(cluster, object)
            .await
            .map(crate::source::as_yaml)
    }

    /// What broke inside the Kustomization or HelmRelease `object` on `cluster` (see
    /// [`crate::source::Read::workloads`]).
    pub async fn workloads(
        &self,
        cluster: &ClusterInfo,
        object: &ObjectKey,
    ) -> Result<crate::fleet::workload::Evidence, ReadError> {
        self.of(cluster)?.workloads(&cluster.key, object).await
    }

    /// Where `asked` on `cluster` comes from (see [`crate::source::Read::trace`]).
    pub async fn trace(
        &self,
        cluster: &ClusterInfo,
        asked: &crate::fleet::trace::Asked,
    ) -> Result<crate::fleet::trace::ClusterChain, ReadError> {
        self.of(cluster)?.trace(&cluster.key, asked).await
    }

    /// The events of every `kind` object in `namespace` on `cluster` (see
    /// [`crate::source::Read::kind_events`]).
    pub async fn kind_events(
        &self,
        cluster: &ClusterInfo,
        namespace: &str,
        kind: crate::fleet::FluxKind,
    ) -> Result<Vec<ObjectEvent>, ReadError> {
        self.of(cluster)?
            .kind_events(&cluster.key, namespace, kind)
            .await
    }

    /// What `root` put on `cluster` (see [`crate::source::Read::tree`]).
    pub async fn tree(
        &self,
        cluster: &ClusterInfo,
        root: &ObjectKey,
    ) -> Result<crate::fleet::tree::ClusterTree, ReadError> {
        self.of(cluster)?.tree(&cluster.key, root).await
    }

    /// A kubeconfig that reaches `cluster`, for a program that only reads (a plugin with
    /// `writes = false`); a writing one gets it from [`Writer::kubeconfig`].
    pub fn kubeconfig(&self, cluster: &ClusterInfo) -> Result<kube::config::Kubeconfig, ReadError> {
        self.of(cluster)?.kubeconfig(&cluster.key)
    }

    /// What changed in the fleet since `since`, from the first source that keeps a history.
    pub async fn history(
        &self,
        since: jiff::Timestamp,
    ) -> Result<Vec<crate::fleet::history::RecordedChange>, ReadError> {
        let mut last = Err(ReadError::NoHistory);
        for reader in self.by_source.iter().flatten() {
            last = reader.history(since).await;
            if last.is_ok() {
                break;
            }
        }
        last
    }

    /// Watches `cluster`'s objects, where its source only summarizes it.
    pub fn open(&self, cluster: &ClusterInfo) {
        if let Ok(reader) = self.of(cluster) {
            reader.open(&cluster.key);
        }
    }

    fn of(&self, cluster: &ClusterInfo) -> Result<&Arc<dyn Read>, ReadError> {
        self.by_source
            .get(usize::from(cluster.source.0))
            .and_then(Option::as_ref)
            .ok_or_else(|| {
                ReadError::NoKubeconfig(
                    "where this cluster's state comes from, objects cannot be read".into(),
                )
            })
    }
}

/// Sends actions through the source of each cluster. Exists only in write mode.
#[derive(Clone)]
pub struct Writer {
    by_source: Arc<[Option<Arc<dyn Write>>]>,
    permissions: Permissions,
}

impl Writer {
    /// This writer sending every request as `who` (`mcp --impersonate`): each cluster's RBAC
    /// decides as for that person. Clusters whose source cannot impersonate are refused.
    pub fn acting_as(&self, who: &Arc<crate::source::Impersonation>) -> Writer {
        Writer {
            by_source: self
                .by_source
                .iter()
                .map(|w| w.as_ref().and_then(|w| w.acting_as(who)))
                .collect(),
            permissions: self.permissions.clone(),
        }
    }

    /// The writer of `cluster`'s source, if it has one.
    fn of(&self, cluster: &ClusterInfo) -> Option<&Arc<dyn Write>> {
        self.by_source
            .get(usize::from(cluster.source.0))
            .and_then(Option::as_ref)
    }

    /// Sends `steps` in order to `cluster`, when its mode allows writes (see
    /// [`crate::source::Write::apply`]).
    pub async fn apply(
        &self,
        cluster: &ClusterInfo,
        steps: &[Step],
        token: &str,
        wait: Option<Duration>,
    ) -> Outcome {
        if !self.permissions.writable(cluster) {
            return Outcome::Refused(READ_ONLY_CLUSTER.into());
        }
        match self.of(cluster) {
            Some(writer) => writer.apply(&cluster.key, steps, token, wait).await,
            None => Outcome::Refused(
                "where this cluster's state comes from, actions cannot be sent".into(),
            ),
        }
    }

    /// Reads `key` on `cluster` until its controller has handled `token` (see
    /// [`crate::source::Write::handled`]).
    pub async fn handled(
        &self,
        cluster: &ClusterInfo,
        key: &ObjectKey,
        token: &str,
        within: Duration,
    ) -> Outcome {
        match self.of(cluster) {
            Some(writer) => writer.handled(&cluster.key, key, token, within).await,
            None => Outcome::Refused(
                "where this cluster's state comes from, objects cannot be read".into(),
            ),
        }
    }

    /// A kubeconfig that reaches `cluster`, for a program that may write there (a plugin with
    /// `writes = true`): only where this cluster's mode allows writes.
    pub fn kubeconfig(
        &self,
        cluster: &ClusterInfo,
        reader: &Reader,
    ) -> Result<kube::config::Kubeconfig, ReadError> {
        if !self.permissions.writable(cluster) {
            return Err(ReadError::ReadOnly);
        }
        reader.kubeconfig(cluster)
    }

    /// [`Writer::apply`], recording `notice` as an Event on the target once its patch is
    /// accepted (see [`crate::source::Write::apply_noting`]).
    pub async fn apply_noting(
        &self,
        cluster: &ClusterInfo,
        steps: &[Step],
        waiting: (&str, Option<Duration>),
        notice: &crate::fleet::notice::Notice,
    ) -> (
        Outcome,
        Option<Result<(), crate::fleet::notice::NotRecorded>>,
    ) {
        if !self.permissions.writable(cluster) {
            return (Outcome::Refused(READ_ONLY_CLUSTER.into()), None);
        }
        match self.of(cluster) {
            Some(writer) => {
                writer
                    .apply_noting(&cluster.key, steps, waiting, notice)
                    .await
            }
            None => (
                Outcome::Refused(
                    "where this cluster's state comes from, actions cannot be sent".into(),
                ),
                None,
            ),
        }
    }

    /// Whether `cluster` lets the actions do Flux's `verb` on `key` (see
    /// [`crate::source::Write::may`]); asked only of clusters this session may write.
    pub async fn may(
        &self,
        cluster: &ClusterInfo,
        key: &ObjectKey,
        verb: &'static str,
    ) -> crate::fleet::verbs::Access {
        use crate::fleet::verbs::Access;
        if !self.permissions.writable(cluster) {
            return Access::Unanswered(READ_ONLY_CLUSTER.into());
        }
        match self.of(cluster) {
            Some(writer) => writer.may(&cluster.key, key, verb).await,
            None => Access::Unanswered(
                "where this cluster's state comes from, access cannot be asked".into(),
            ),
        }
    }

    /// Who `cluster` authenticates the actions as, where it says (see
    /// [`crate::source::Write::identity`]); asked only of clusters this session may write.
    pub async fn identity(
        &self,
        cluster: &ClusterInfo,
    ) -> Option<Arc<crate::fleet::notice::Identity>> {
        if !self.permissions.writable(cluster) {
            return None;
        }
        let writer = self.of(cluster)?;
        writer.identity(&cluster.key).await
    }
}
