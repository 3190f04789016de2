//! One virtual cluster's objects. Objects are kept serialized (a list or watch response is then a
//! concatenation, not a serialization), with a bounded history of changes: a watch can resume from
//! any resourceVersion still in the history, and gets 410 Gone for anything older.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{Value, json};

use super::flux::Intent;
use super::resources::Res;
use crate::facts::FluxKind;

/// Store key: resource, namespace ("" for cluster-scoped), name.
pub type Key = (Res, String, String);

/// One stored object, immutable: a change stores a new one.
#[derive(Debug)]
pub struct Object {
    pub res: Res,
    pub namespace: String,
    pub name: String,
    pub rv: u64,
    pub suspended: bool,
    pub intent: Option<Intent>,
    /// The whole object as JSON, in its storage version.
    pub json: Bytes,
}

impl Object {
    pub fn key(&self) -> Key {
        (self.res, self.namespace.clone(), self.name.clone())
    }

    pub fn value(&self) -> Value {
        serde_json::from_slice(&self.json).unwrap_or(Value::Null)
    }

    /// `metadata.labels`, read from the JSON when a label selector needs them: keeping them
    /// parsed would cost more memory than the objects' JSON at fleet scale.
    pub fn labels(&self) -> Vec<(String, String)> {
        #[derive(serde::Deserialize)]
        struct Meta {
            #[serde(default)]
            labels: std::collections::BTreeMap<String, String>,
        }
        #[derive(serde::Deserialize)]
        struct Partial {
            metadata: Meta,
        }
        serde_json::from_slice::<Partial>(&self.json)
            .map(|p| p.metadata.labels.into_iter().collect())
            .unwrap_or_default()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeType {
    Added,
    Modified,
    Deleted,
}

impl ChangeType {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeType::Added => "ADDED",
            ChangeType::Modified => "MODIFIED",
            ChangeType::Deleted => "DELETED",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Change {
    pub rv: u64,
    /// When it happened, to expire history by age.
    pub at: Instant,
    pub kind: ChangeType,
    pub object: Arc<Object>,
    /// The version before this change, kept only when its labels differ: only then can a
    /// label-selected watch see the object enter or leave its selection.
    pub previous: Option<Arc<Object>>,
}

/// The watch asked for a resourceVersion older than the retained history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expired {
    pub requested: u64,
    pub oldest: u64,
}

/// How much a store keeps.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Changes kept for watches to resume from …
    pub history: usize,
    /// … and for at most this long, like the API server's watch cache.
    pub history_age: Duration,
    /// Events kept; the oldest expire first.
    pub events: usize,
}

pub struct Store {
    rv: u64,
    /// Every change with an rv greater than this is in `history`.
    compacted: u64,
    objects: BTreeMap<Key, Arc<Object>>,
    history: VecDeque<Change>,
    limits: Limits,
    /// Events in creation order, to expire the oldest like the API server's TTL.
    events: VecDeque<Key>,
}

/// Serialized JSON in an allocation of exactly its size. The serializer writes into a buffer
/// kept per thread: growing a fresh one by doubling and shrinking it at the end cost every write
/// a string of reallocations, and under churn that churn of large blocks fragmented the heap
/// (resident memory kept rising while the live heap stayed flat; see the soak in docs/simulator.md).
fn exact_bytes(value: &Value) -> Bytes {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with_borrow_mut(|buf| {
        buf.clear();
        if serde_json::to_writer(&mut *buf, value).is_err() {
            buf.clear();
        }
        let out = Bytes::copy_from_slice(buf);
        // One huge object must not pin its buffer for the thread's life.
        if buf.capacity() > 1024 * 1024 {
            *buf = Vec::new();
        }
        out
    })
}

impl Store {
    pub fn new(first_rv: u64, limits: Limits) -> Store {
        Store {
            rv: first_rv,
            compacted: first_rv,
            objects: BTreeMap::new(),
            history: VecDeque::new(),
            limits,
            events: VecDeque::new(),
        }
    }

    pub fn resource_version(&self) -> u64 {
        self.rv
    }

    pub fn get(&self, res: Res, namespace: &str, name: &str) -> Option<&Arc<Object>> {
        self.objects
            .get(&(res, namespace.to_string(), name.to_string()))
    }

    /// Objects of `res`, in one namespace or all, in key order.
    pub fn list<'a>(
        &'a self,
        res: Res,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Arc<Object>> + 'a {
        let start = (res, namespace.unwrap_or("").to_string(), String::new());
        self.objects
            .range(start..)
            .take_while(move |((r, ns, _), _)| *r == res && namespace.is_none_or(|n| n == ns))
            .map(|(_, o)| o)
    }

    pub fn all(&self) -> impl Iterator<Item = &Arc<Object>> {
        self.objects.values()
    }

    /// Stores `value` (created or replaced) with the next resourceVersion, and records the change.
    /// The resourceVersion of the latest change.
    pub fn rv(&self) -> u64 {
        self.rv
    }

    pub fn put(&mut self, res: Res, mut value: Value, intent: Option<Intent>) -> Arc<Object> {
        self.rv += 1;
        let rv = self.rv;
        value["metadata"]["resourceVersion"] = json!(rv.to_string());
        let meta = &value["metadata"];
        let namespace = meta["namespace"].as_str().unwrap_or("").to_string();
        let name = meta["name"].as_str().unwrap_or("").to_string();
        let suspended = match res {
            Res::Flux(kind) => suspended(kind, &value),
            _ => false,
        };
        let object = Arc::new(Object {
            res,
            suspended,
            intent,
            json: exact_bytes(&value),
            namespace,
            name,
            rv,
        });
        let key = object.key();
        let replaced = self.objects.insert(key.clone(), object.clone());
        let kind = if replaced.is_some() {
            ChangeType::Modified
        } else {
            ChangeType::Added
        };
        if res == Res::Event && replaced.is_none() {
            self.events.push_back(key);
            if self.events.len() > self.limits.events.max(1)
                && let Some(old) = self.events.pop_front()
            {
                self.delete(&old);
            }
        }
        self.record(Change {
            rv,
            at: Instant::now(),
            kind,
            object: object.clone(),
            // Keeping every superseded version would hold the whole churn of the history window.
            previous: replaced.filter(|old| old.labels() != object.labels()),
        });
        object
    }

    pub fn delete(&mut self, key: &Key) -> Option<Arc<Object>> {
        let old = self.objects.remove(key)?;
        self.rv += 1;
        let mut value = old.value();
        value["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        let gone = Arc::new(Object {
            res: old.res,
            namespace: old.namespace.clone(),
            name: old.name.clone(),
            rv: self.rv,
            suspended: old.suspended,
            intent: old.intent,
            json: exact_bytes(&value),
        });
        let rv = self.rv;
        self.record(Change {
            rv,
            at: Instant::now(),
            kind: ChangeType::Deleted,
            object: gone,
            previous: None,
        });
        Some(old)
    }

    fn record(&mut self, change: Change) {
        self.history.push_back(change);
        let limits = self.limits;
        while let Some(front) = self.history.front() {
            let too_many = self.history.len() > limits.history.max(1);
            // The newest change always stays: a watch at the current version can resume.
            let too_old = self.history.len() > 1 && front.at.elapsed() >= limits.history_age;
            if !too_many && !too_old {
                break;
            }
            self.compacted = front.rv;
            self.history.pop_front();
        }
    }

    /// Forgets the whole history and moves past every version handed out so far, as an API
    /// server restart with a compacted etcd does: every open watch gets 410 Gone and relists.
    pub fn compact(&mut self) {
        self.rv += 1;
        self.history.clear();
        self.compacted = self.rv;
    }

    /// The changes after `rv`, oldest first, or Expired when some of them were forgotten.
    pub fn changes_since(&self, rv: u64) -> Result<impl Iterator<Item = &Change>, Expired> {
        if rv < self.compacted {
            return Err(Expired {
                requested: rv,
                oldest: self.compacted,
            });
        }
        let skip = self.history.partition_point(|c| c.rv <= rv);
        Ok(self.history.iter().skip(skip))
    }

    /// Whether a list or watch at `rv` can still be served consistently.
    pub fn is_retained(&self, rv: u64) -> bool {
        rv >= self.compacted
    }
}

/// Whether a stored Flux object is suspended, as its controller reads it: `spec.suspend`, or for
/// an ArtifactGenerator the `source.extensions.fluxcd.io/reconcile: disabled` annotation. The
/// simulator's own reading, not the engine's, so that comparing the two can catch either.
fn suspended(kind: FluxKind, value: &Value) -> bool {
    if kind == FluxKind::ArtifactGenerator {
        value["metadata"]["annotations"]["source.extensions.fluxcd.io/reconcile"] == "disabled"
    } else {
        value["spec"]["suspend"] == true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::FluxKind;

    fn ks(name: &str) -> Value {
        json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
               "metadata": {"name": name, "namespace": "flux-system", "labels": {"a": "b"}},
               "spec": {"suspend": true}})
    }

    const KS: Res = Res::Flux(FluxKind::Kustomization);

    fn limits(history: usize, events: usize) -> Limits {
        Limits {
            history,
            history_age: Duration::from_secs(3600),
            events,
        }
    }

    #[test]
    fn put_assigns_increasing_versions_and_lists_by_namespace() {
        let mut s = Store::new(100, limits(10, 10));
        let a = s.put(KS, ks("a"), None);
        let b = s.put(KS, ks("b"), None);
        assert_eq!((a.rv, b.rv), (101, 102));
        assert!(a.suspended);
        assert_eq!(a.value()["metadata"]["resourceVersion"], "101");
        assert_eq!(s.list(KS, Some("flux-system")).count(), 2);
        assert_eq!(s.list(KS, Some("other")).count(), 0);
        assert_eq!(s.list(Res::Event, None).count(), 0);
    }

    #[test]
    fn history_window_expires_old_versions() {
        let mut s = Store::new(0, limits(2, 10));
        for _ in 0..3 {
            s.put(KS, ks("a"), None);
        }
        assert_eq!(
            s.changes_since(0).err(),
            Some(Expired {
                requested: 0,
                oldest: 1
            })
        );
        let rvs: Vec<u64> = s.changes_since(1).unwrap().map(|c| c.rv).collect();
        assert_eq!(rvs, [2, 3]);
        s.compact();
        assert!(
            s.changes_since(3).is_err(),
            "a watch at the newest version is gone too"
        );
        assert_eq!(s.changes_since(4).unwrap().count(), 0);
    }

    #[test]
    fn history_also_expires_by_age() {
        let mut s = Store::new(
            0,
            Limits {
                history: 100,
                history_age: Duration::ZERO,
                events: 10,
            },
        );
        s.put(KS, ks("a"), None);
        s.put(KS, ks("a"), None);
        // Each change ages out as soon as the next is recorded: only the newest is kept.
        assert!(s.changes_since(0).is_err());
        assert_eq!(s.changes_since(1).unwrap().count(), 1);
    }

    #[test]
    fn oldest_events_expire() {
        let mut s = Store::new(0, limits(100, 2));
        for i in 0..3 {
            s.put(
                Res::Event,
                json!({"metadata": {"name": format!("e{i}"), "namespace": "x"}}),
                None,
            );
        }
        let names: Vec<&str> = s.list(Res::Event, None).map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["e1", "e2"]);
        assert_eq!(
            s.changes_since(3).unwrap().next().unwrap().kind,
            ChangeType::Deleted
        );
    }
}
