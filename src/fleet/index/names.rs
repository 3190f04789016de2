//! The index's shared texts: one copy of every name, revision and condition text of the fleet.

use std::collections::HashSet;
use std::sync::Arc;

use crate::fleet::graph;
use crate::fleet::report::{Component, Instance, Report};
use crate::fleet::{FluxSummary, ObjectKey, SharedText};

/// One shared copy of every namespace, object name, revision and condition text: GitOps fleets
/// run the same objects on every cluster, so 60,000 objects carry a few hundred distinct names,
/// and the clusters on one revision say so in the same words. Sharing them saves memory and makes
/// keys cheap to copy for the TUI's rows.
#[derive(Debug, Default)]
pub(super) struct Names {
    texts: Shared<SharedText>,
    /// One copy of each list of controllers and of each instance a report names: a fleet on
    /// one release reports the same few (400 bytes a cluster otherwise).
    components: Shared<Arc<[Component]>>,
    instances: Shared<Arc<Instance>>,
}

impl Names {
    /// Shares the names and revisions of a summary entering the index and sets its fingerprint.
    pub(super) fn admit(&mut self, summary: &mut FluxSummary) {
        let key = &mut summary.key;
        key.namespace = self.one(&key.namespace);
        key.name = self.one(&key.name);
        for text in [
            &mut summary.revision,
            &mut summary.reason,
            &mut summary.message,
        ]
        .into_iter()
        .flatten()
        {
            *text = self.one(text);
        }
        // Revisions repeat across a fleet as names do: the objects on one revision share it.
        if let Some(r) = summary.rollout.as_deref_mut() {
            for text in r.repeated_mut() {
                *text = self.one(text);
            }
        }
        // A fleet's objects name the same few sources and dependencies.
        let refs = summary.source.as_deref_mut().into_iter();
        for r in refs.chain(summary.depends_on.iter_mut()) {
            r.kind = self.one(&r.kind);
            r.namespace = self.one(&r.namespace);
            r.name = self.one(&r.name);
        }
        summary.fingerprint = summary.compute_fingerprint();
    }

    /// The shared copy of `text`.
    fn text(&mut self, text: &str) -> SharedText {
        match self.texts.set.get(text) {
            Some(shared) => shared.clone(),
            None => self.one(&SharedText::from(text)),
        }
    }

    /// What `o` needs, named with the shared names.
    pub(super) fn upstream(&mut self, o: &FluxSummary) -> Vec<ObjectKey> {
        graph::upstream_with(o, &mut |t| self.text(t))
    }

    /// Shares what a report entering the index says: its texts, and its list of controllers
    /// and its instance whole where another cluster's report said the same (found by their
    /// contents first: a fleet on one release sends the same lists again and again, which are
    /// then not copied to share their texts).
    pub(super) fn report(&mut self, report: &mut Report) {
        report.share(&mut |t| self.one(t));
        report.components = match self.components.get(&report.components) {
            Some(shared) => shared,
            None => {
                let list: Arc<[Component]> = report
                    .components
                    .iter()
                    .map(|c| c.shared(&mut |t| self.one(t)))
                    .collect();
                self.components.one(&list, 64)
            }
        };
        if let Some(mut instance) = report.instance.take() {
            report.instance = Some(match self.instances.get(&instance) {
                Some(shared) => shared,
                None => {
                    Arc::make_mut(&mut instance).share(&mut |t| self.one(t));
                    self.instances.one(&instance, 64)
                }
            });
        }
    }

    fn one(&mut self, text: &SharedText) -> SharedText {
        self.texts.one(text, 1024)
    }
}

/// One shared copy of each value of a kind, let go once nothing else holds it (swept when the
/// set has doubled since the last sweep, as texts are).
#[derive(Debug)]
struct Shared<H> {
    set: HashSet<H>,
    swept: usize,
}

impl<H> Default for Shared<H> {
    fn default() -> Self {
        Shared {
            set: HashSet::new(),
            swept: 0,
        }
    }
}

/// A handle to a value shared by reference counting.
trait Handle: Clone + std::hash::Hash + Eq {
    /// How many hold the value (the set's own handle included).
    fn holders(&self) -> usize;
}

impl<T: ?Sized + std::hash::Hash + Eq> Handle for Arc<T> {
    fn holders(&self) -> usize {
        Arc::strong_count(self)
    }
}

impl Handle for SharedText {
    fn holders(&self) -> usize {
        SharedText::holders(self)
    }
}

impl<H: Handle> Shared<H> {
    /// The shared copy of what `value` holds, if there is one.
    fn get<Q: ?Sized + std::hash::Hash + Eq>(&self, value: &Q) -> Option<H>
    where
        H: std::borrow::Borrow<Q>,
    {
        self.set.get(value).cloned()
    }

    /// The shared copy of `value`; the set is swept once it holds twice what it held after the
    /// last sweep, and at least `floor`.
    fn one(&mut self, value: &H, floor: usize) -> H {
        if let Some(shared) = self.set.get(value) {
            return shared.clone();
        }
        if self.set.len() >= 2 * self.swept.max(floor) {
            self.set.retain(|v| v.holders() > 1);
            self.swept = self.set.len();
        }
        self.set.insert(value.clone());
        value.clone()
    }
}
