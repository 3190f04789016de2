//! The seam every source of fleet state goes through: a source written here, in a few lines,
//! feeds the same index, reads and actions as the kube engine, and the session routes each
//! cluster's reads and writes to the source it comes from.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::json;

use fluxfleet::config::{Config, WriteGrant};
use fluxfleet::fleet::index::Change;
use fluxfleet::fleet::read::ReadError;
use fluxfleet::fleet::verbs::{Outcome, Step};
use fluxfleet::fleet::{
    ClusterInfo, ClusterKey, Connection, FluxKind, FluxSummary, ObjectEvent, ObjectKey, Phase,
};
use fluxfleet::session::{READ_ONLY_CLUSTER, Session};
use fluxfleet::source::{Read, Sink, Source, Write};

/// A source that knows `clusters` at start and finds `later` once running; every cluster holds
/// one Kustomization named after its source.
struct Fake {
    name: &'static str,
    clusters: Vec<&'static str>,
    later: Vec<&'static str>,
    /// What its writer was asked to do.
    sent: Arc<Mutex<Vec<String>>>,
    reads: bool,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Fake {
    fn new(name: &'static str, clusters: Vec<&'static str>, later: Vec<&'static str>) -> Fake {
        Fake {
            name,
            clusters,
            later,
            sent: Arc::default(),
            reads: true,
            task: None,
        }
    }
}

fn apps(source: &str) -> FluxSummary {
    let object = json!({"metadata": {"name": source, "namespace": "flux-system"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    FluxSummary::of(FluxKind::Kustomization, &object).unwrap()
}

impl Source for Fake {
    fn clusters(&self) -> Vec<ClusterInfo> {
        let infos = self.clusters.iter().map(|c| ClusterInfo::new(c, self.name));
        infos.collect()
    }

    fn start(&mut self, sink: Sink) {
        let (name, known, later) = (self.name, self.clusters.clone(), self.later.clone());
        self.task = Some(tokio::spawn(async move {
            for c in later.iter().copied() {
                let key = ClusterKey::new(c);
                sink.send(&key, Change::Added(ClusterInfo::new(c, name)))
                    .await
                    .unwrap();
            }
            for c in known.into_iter().chain(later) {
                let key = ClusterKey::new(c);
                let change = Change::Replaced(FluxKind::Kustomization, vec![apps(name)]);
                sink.send(&key, change).await.unwrap();
                let live = Change::Connection(Connection::new(Phase::Live));
                sink.send(&key, live).await.unwrap();
            }
        }));
    }

    fn reader(&self) -> Option<Arc<dyn Read>> {
        let reader: Arc<dyn Read> = Arc::new(FakeReader(self.name));
        self.reads.then_some(reader)
    }

    fn writer(&self, _grant: &WriteGrant) -> Option<Arc<dyn Write>> {
        Some(Arc::new(FakeWriter(self.sent.clone())))
    }

    fn stop(&mut self) -> BoxFuture<'_, ()> {
        let task = self.task.take();
        Box::pin(async move {
            if let Some(task) = task {
                let _ = task.await;
            }
        })
    }
}

struct FakeReader(&'static str);

impl Read for FakeReader {
    fn events<'a>(
        &'a self,
        _: &'a ClusterKey,
        _: &'a [ObjectKey],
    ) -> BoxFuture<'a, Result<Vec<ObjectEvent>, ReadError>> {
        Box::pin(async { Ok(Vec::new()) })
    }

    fn object<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        object: &'a ObjectKey,
    ) -> BoxFuture<'a, Result<serde_json::Value, ReadError>> {
        let from = format!("{} on {cluster}", self.0);
        let object = serde_json::json!({"metadata": {"name": object.name.to_string(),
            "annotations": {"from": from}}});
        Box::pin(async move { Ok(object) })
    }
}

struct FakeWriter(Arc<Mutex<Vec<String>>>);

impl Write for FakeWriter {
    fn apply<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        steps: &'a [Step],
        _: &'a str,
        _: Option<Duration>,
    ) -> BoxFuture<'a, Outcome> {
        let line = format!("{cluster}: {} steps", steps.len());
        self.0.lock().unwrap().push(line);
        Box::pin(async { Outcome::Done })
    }

    fn identity<'a>(
        &'a self,
        _: &'a ClusterKey,
    ) -> BoxFuture<'a, Option<Arc<fluxfleet::fleet::notice::Identity>>> {
        Box::pin(async { None })
    }

    fn handled<'a>(
        &'a self,
        _: &'a ClusterKey,
        _: &'a ObjectKey,
        _: &'a str,
        _: Duration,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(async { Outcome::Done })
    }
}

#[tokio::test]
async fn sources_feed_one_index_and_each_cluster_is_read_and_written_through_its_own() {
    let first = Fake::new("alpha", vec!["a1", "a2"], vec!["a3"]);
    let mut second = Fake::new("beta", vec!["b1"], vec!["b2"]);
    second.reads = false;
    let (sent_first, sent_second) = (first.sent.clone(), second.sent.clone());
    let mut session = Session::start(vec![Box::new(first), Box::new(second)]);
    assert!(session.settle(Duration::from_secs(10)).await);
    // Clusters found while running: applied as their changes arrive.
    let live = |s: &Session| {
        let clusters = s.index.clusters().iter();
        clusters
            .filter(|c| c.connection.phase == Phase::Live)
            .count()
    };
    while live(&session) < 5 {
        let event = session
            .next_event()
            .await
            .expect("the sources are still running");
        session.index.apply(event);
    }
    let names: Vec<&str> = session
        .index
        .clusters()
        .iter()
        .map(|c| c.info.name.as_str())
        .collect();
    assert_eq!(names.len(), 5, "{names:?}");
    for c in session.index.clusters() {
        let source = &c.info.workspace;
        let objects: Vec<&str> = c.objects.keys().map(|k| &*k.name).collect();
        assert_eq!(
            objects,
            [source.as_str()],
            "{} holds its own source's object",
            c.info.name
        );
    }

    // Reads go to the cluster's own source; one that cannot read says so.
    let reader = session.reader();
    let key = ObjectKey::new(FluxKind::Kustomization, "flux-system", "alpha");
    let a3 = session.index.cluster_named("a3").unwrap().info.clone();
    let yaml = reader.yaml(&a3, &key).await.unwrap();
    assert!(yaml.contains("name: alpha"), "{yaml}");
    assert!(yaml.contains("from: alpha on a3"), "{yaml}");
    let b1 = session.index.cluster_named("b1").unwrap().info.clone();
    let refused = reader.yaml(&b1, &key).await.unwrap_err();
    // No kubeconfig reaches it: not worth asking again.
    assert!(matches!(refused, ReadError::NoKubeconfig(_)), "{refused:?}");
    assert!(!refused.retryable());

    // Writes go to the cluster's own source, only where the modes allow.
    let (config, _) = Config::parse(
        Some("[[modes]]\ncluster = \"*1\"\nmode = \"write\"\n"),
        std::path::Path::new("u.toml"),
    );
    let clusters = session.index.clusters().iter().map(|c| &*c.info);
    let (grant, permissions) = config.writable(None, clusters);
    let writer = session.sources.writer(grant.unwrap(), permissions);
    let steps: [Step; 0] = [];
    for name in ["a1", "a2", "b1", "b2"] {
        let info = session.index.cluster_named(name).unwrap().info.clone();
        let outcome = writer.apply(&info, &steps, "t", None).await;
        let expected = if name.ends_with('1') {
            Outcome::Done
        } else {
            Outcome::Refused(READ_ONLY_CLUSTER.into())
        };
        assert_eq!(outcome, expected, "{name}");
    }
    assert_eq!(*sent_first.lock().unwrap(), ["a1: 0 steps"]);
    assert_eq!(*sent_second.lock().unwrap(), ["b1: 0 steps"]);
    session.shutdown().await;
}
