//! What broke inside each failing Kustomization or HelmRelease an alert is about: its
//! workloads read from the clusters where it fails (as `fluxfleet workloads` reads them) when
//! its cause is first found and again every [`AGAIN`], off the alert loop; the top verdict goes
//! into the alert's `workloads` annotation, with how many of its clusters show it.

use std::collections::{HashMap, HashSet};

use jiff::{SignedDuration, Timestamp};
use tokio::sync::mpsc;

use super::state::{AlertKey, Finding, Posted};
use crate::export::Filter;
use crate::export::workloads::{clusters_text, targets};
use crate::fleet::{FluxKind, Index, ObjectKey};
use crate::session::Reader;
use crate::session::evidence::{Gather, gather};

/// How often a cause's workloads are read again while it lasts.
const AGAIN: SignedDuration = SignedDuration::from_mins(10);
/// Longest annotation, in characters (as the other annotations).
const ANNOTATION: usize = 1024;

/// The verdicts learned and the reads under way.
pub struct Inside {
    reader: Reader,
    verdicts: HashMap<ObjectKey, (Timestamp, String)>,
    asking: HashSet<ObjectKey>,
    tx: mpsc::UnboundedSender<(ObjectKey, String)>,
    rx: mpsc::UnboundedReceiver<(ObjectKey, String)>,
}

impl Inside {
    pub fn new(reader: Reader) -> Inside {
        let (tx, rx) = mpsc::unbounded_channel();
        Inside {
            reader,
            verdicts: HashMap::new(),
            asking: HashSet::new(),
            tx,
            rx,
        }
    }

    /// The next verdict read.
    pub async fn next(&mut self) -> Option<(ObjectKey, String)> {
        self.rx.recv().await
    }

    pub fn learned(&mut self, key: ObjectKey, top: String, now: Timestamp) {
        self.asking.remove(&key);
        self.verdicts.insert(key, (now, top));
    }

    /// Starts reading the workloads of every Kustomization and HelmRelease in `found` not read
    /// within [`AGAIN`]; forgets the verdicts of causes no longer found.
    pub fn ask(&mut self, index: &Index, filter: &Filter, found: &[Finding], now: Timestamp) {
        let keys: Vec<ObjectKey> = found
            .iter()
            .filter_map(|f| {
                let AlertKey::Cause {
                    kind,
                    namespace,
                    name,
                    ..
                } = &f.key
                else {
                    return None;
                };
                let kind = FluxKind::parse(kind)?;
                matches!(kind, FluxKind::Kustomization | FluxKind::HelmRelease)
                    .then(|| ObjectKey::new(kind, namespace, name))
            })
            .collect();
        self.verdicts.retain(|k, _| keys.contains(k));
        for key in keys {
            let fresh = self
                .verdicts
                .get(&key)
                .is_some_and(|(at, _)| now.duration_since(*at) < AGAIN);
            if fresh || self.asking.contains(&key) {
                continue;
            }
            let scope = Filter {
                kind: Some(key.kind),
                name: Some(key.name.to_string()),
                namespace: Some(key.namespace.to_string()),
                status: None,
                ..filter.clone()
            };
            let Some((_, clusters)) = targets(index, &scope, false).into_iter().next() else {
                continue;
            };
            self.asking.insert(key.clone());
            let (reader, tx) = (self.reader.clone(), self.tx.clone());
            tokio::spawn(async move {
                let folded = gather(&reader, &clusters, &key, Gather::default()).await;
                let top = match folded.top() {
                    Some(line) => format!(
                        "{}: {} — on {} of {} ({})",
                        line.workload,
                        line.headline,
                        line.clusters.len(),
                        crate::units::count(folded.clusters, "cluster", "clusters"),
                        clusters_text(&line.clusters)
                    ),
                    None if folded.read == 0 => "its workloads could not be read".to_string(),
                    None => "its workloads are healthy".to_string(),
                };
                let _ = tx.send((key, top));
            });
        }
    }

    /// Adds the `workloads` annotation to the alerts whose object's verdict is known.
    pub fn annotate(&self, posts: &mut [Posted]) {
        for post in posts {
            let label = |name: &str| post.labels.get(name).map(String::as_str).unwrap_or("");
            let Some(kind) = FluxKind::parse(label("kind")) else {
                continue;
            };
            let key = ObjectKey::new(kind, label("namespace"), label("name"));
            if let Some((_, top)) = self.verdicts.get(&key) {
                let kept: String = top.chars().filter(|c| !c.is_control()).collect();
                post.annotations.insert(
                    "workloads".into(),
                    crate::units::truncate(&kept, ANNOTATION),
                );
            }
        }
    }
}
