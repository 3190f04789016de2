//! `FluxSummary`: the only thing fluxfleet keeps per Flux object — a few hundred bytes instead of
//! the whole object (HelmRelease values and Kustomization inventories can be megabytes).

use crate::fleet::SharedText;
use std::hash::{Hash, Hasher};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::annotations;
use super::bounds::{bounded, bounded_text, limits, shared};
use super::deployed::Rollout;
use super::health::{health, is_suspended};
use super::object::{Object, Ref, Text};
use super::{FluxKind, Health};
use status::{since_of, stalled_words};
pub use words::shared_words;

/// Which object, in one cluster: kind, namespace, name. Orders by kind first, as `flux get all`.
/// Cheap to clone (the names are shared): the dependency graph keeps copies for its edges,
/// and the TUI's rows (tens of thousands, rebuilt when the data changes) refer to objects by key.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ObjectKey {
    pub kind: FluxKind,
    pub namespace: SharedText,
    pub name: SharedText,
}

/// By kind, namespace, name. The index shares every name: two keys for one object usually hold
/// the same text, which compares equal without reading it (every lookup ends in such a match).
impl Ord for ObjectKey {
    fn cmp(&self, other: &ObjectKey) -> std::cmp::Ordering {
        fn text(a: &SharedText, b: &SharedText) -> std::cmp::Ordering {
            if SharedText::ptr_eq(a, b) {
                std::cmp::Ordering::Equal
            } else {
                a.cmp(b)
            }
        }
        self.kind
            .cmp(&other.kind)
            .then_with(|| text(&self.namespace, &other.namespace))
            .then_with(|| text(&self.name, &other.name))
    }
}

impl PartialOrd for ObjectKey {
    fn partial_cmp(&self, other: &ObjectKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl ObjectKey {
    pub fn new(kind: FluxKind, namespace: &str, name: &str) -> ObjectKey {
        ObjectKey {
            kind,
            namespace: SharedText::read(namespace),
            name: SharedText::read(name),
        }
    }
}

/// A reference from one Flux object to another (`sourceRef`, `chartRef`, `dependsOn`). Its
/// texts are shared between the objects of a fleet by the index, as keys' are.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectRef {
    /// Empty for `dependsOn`, which always names an object of the same kind.
    pub kind: SharedText,
    pub namespace: SharedText,
    pub name: SharedText,
}

/// The `status` of the Ready condition, as `flux get` prints it in READY.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Ready {
    True,
    False,
    Unknown,
}

/// What fluxfleet shows about one Flux object. On the bus as one flat JSON object
/// ([`wire`]).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(from = "wire::Flat<'static>")]
pub struct FluxSummary {
    pub key: ObjectKey,
    pub health: Health,
    pub suspended: bool,
    /// The Ready condition's status; None when there is no Ready condition.
    pub ready: Option<Ready>,
    /// Reason of the condition that decided the health (Stalled, else Ready), and its message
    /// (a HelmRelease stalled by `RetriesExceeded` says what failed in Ready: that message).
    /// Shared between the objects of a fleet by the index: a thousand clusters that applied one
    /// revision say so in one text.
    pub reason: Option<SharedText>,
    pub message: Option<SharedText>,
    /// What `flux get` prints as REVISION for this kind. Shared between the objects of a fleet
    /// by the index, as names are.
    pub revision: Option<SharedText>,
    pub generation: i64,
    pub observed_generation: Option<i64>,
    /// Since when it is in its state: the Ready condition's `lastTransitionTime`, except that
    /// for an object not ready it is when it first stopped being ready. kustomize-controller
    /// and helm-controller rewrite Ready's time at every attempt of a failing object, so the
    /// earliest of that time, what its `status.history` records of this failure, and its
    /// previous summary's (the index keeps it across changes: [`FluxSummary::carry`]).
    pub since: Option<Timestamp>,
    /// Reconcile request tokens and who suspended it, which few objects carry: boxed together
    /// so that the rest keep no room for them (see [`Marks`]). None when it carries none.
    pub marks: Option<Box<Marks>>,
    pub source: Option<Box<ObjectRef>>,
    /// `dependsOn`; for an ArtifactGenerator, its `sources` (what it needs, as dependsOn is).
    pub depends_on: Box<[ObjectRef]>,
    /// Entries in `status.inventory` (see [`FluxSummary::inventory`]).
    inventory: Option<Entries>,
    /// Which revision runs, which was tried, and since when: for the rollout view. None for
    /// kinds that deploy nothing (sources carry theirs in `revision`).
    pub rollout: Option<Box<Rollout>>,
    /// A hash of what makes two objects on different clusters fail the same way: kind,
    /// namespace, name, health, reason and message. Set by the index when the summary enters it
    /// (so that grouping 60,000 objects reads no strings); 0 before.
    pub fingerprint: u64,
}

/// What few objects carry, kept out of [`FluxSummary`] in one box: the index keeps a summary for
/// every object (550,000 on a 100,000-cluster reader), and four texts inline were 64 of its 256
/// bytes; without them it fits the allocator's 192-byte class.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Marks {
    /// `status.lastHandledReconcileAt`: the last reconcile request token the controller handled.
    pub last_handled_reconcile_at: Option<Box<str>>,
    /// `reconcile.fluxcd.io/requestedAt`: the last reconcile request token written.
    pub requested_at: Option<Box<str>>,
    /// Who suspended it (`fluxfleet.dev/suspended-by`, or the Flux Operator's
    /// `fluxcd.controlplane.io/suspendedBy`) and why (`fluxfleet.dev/suspend-reason`).
    pub suspended_by: Option<Box<str>>,
    pub suspend_reason: Option<Box<str>>,
}

impl Marks {
    /// These marks boxed, or None when there are none.
    fn boxed(self) -> Option<Box<Marks>> {
        (self != Marks::default()).then(|| Box::new(self))
    }
}

/// A count of entries, kept in four bytes with room for "none": `Option<u32>` takes eight, and
/// with them a summary's three one-byte fields no longer share one word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entries(std::num::NonZeroU32);

impl Entries {
    /// Counts above `u32::MAX - 1` are kept as that.
    fn new(n: u32) -> Entries {
        Entries(std::num::NonZeroU32::MIN.saturating_add(n.min(u32::MAX - 1)))
    }

    fn get(self) -> u32 {
        self.0.get() - 1
    }
}

/// Why a JSON document cannot be summarised as a Flux object.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SummaryError {
    #[error("object has no metadata.name")]
    NoName,
    #[error("object name or namespace longer than Kubernetes allows")]
    NameTooLong,
    #[error("{0} is not a Flux kind fluxfleet knows")]
    UnknownKind(String),
}

impl FluxSummary {
    /// This summary with every text cut to the [`limits`], for one that did not come from
    /// [`FluxSummary::of`] (read back from a bus another process writes).
    pub fn bounded(mut self) -> FluxSummary {
        let arc = |t: &mut Option<SharedText>, max| {
            if let Some(text) = t.as_deref()
                && text.chars().count() > max
            {
                *t = Some(bounded_text(text, max).into());
            }
        };
        arc(&mut self.reason, limits::REASON);
        arc(&mut self.message, limits::MESSAGE);
        arc(&mut self.revision, limits::SHORT);
        if let Some(marks) = self.marks.as_deref_mut() {
            for (t, max) in [
                (&mut marks.last_handled_reconcile_at, limits::SHORT),
                (&mut marks.requested_at, limits::SHORT),
                (&mut marks.suspended_by, limits::SHORT),
                (&mut marks.suspend_reason, limits::SUSPEND_REASON),
            ] {
                if let Some(text) = t.as_deref() {
                    *t = Some(bounded(text, max));
                }
            }
        }
        if self.depends_on.len() > limits::DEPENDS_ON {
            self.depends_on = self.depends_on[..limits::DEPENDS_ON].into();
        }
        self.fingerprint = 0;
        self
    }

    /// The revision as `flux get` shows it: hex shortened, except for chart versions.
    pub fn shown_revision(&self) -> String {
        match (&self.revision, self.key.kind) {
            (None, _) => String::new(),
            (Some(r), FluxKind::HelmChart) => r.to_string(),
            (Some(r), _) => crate::units::truncate_hex(r),
        }
    }

    /// Summarises one object of a known kind. Only `metadata.name` is required: anything else that
    /// is missing or malformed shows as absent, never as a failure to see the object at all.
    pub fn of(kind: FluxKind, object: &Value) -> Result<FluxSummary, SummaryError> {
        FluxSummary::read(kind, &Object::from_value(object))
    }

    /// [`FluxSummary::of`] an object read as its summary reads it (the engine reads list pages
    /// and watch lines straight into [`Object`]s).
    pub fn read(kind: FluxKind, object: &Object) -> Result<FluxSummary, SummaryError> {
        let name = object.name().ok_or(SummaryError::NoName)?;
        let namespace = object.namespace().unwrap_or_default();
        if name.len() > limits::NAME || namespace.len() > limits::NAME {
            return Err(SummaryError::NameTooLong);
        }
        let short = |t: &str| bounded(t, limits::SHORT);
        let health = health(kind, object);
        let stalled = object
            .condition("Stalled")
            .filter(|c| c.status.get() == Some("True"));
        let ready = object.condition("Ready");
        let shown = if health == Health::Stalled {
            stalled
        } else {
            ready
        };
        let text = |t: Option<&Text>, max: usize| shared(t.and_then(Text::get), max);
        let message = match stalled {
            Some(stalled) => stalled_words(stalled, object),
            None => text(shown.map(|c| &c.message), limits::MESSAGE),
        };
        let annotation = |key: &str| object.annotation(key).filter(|s| !s.is_empty());
        let status = object.status();
        Ok(FluxSummary {
            key: ObjectKey::new(kind, namespace, name),
            health,
            suspended: is_suspended(kind, object),
            ready: match ready.and_then(|c| c.status.get()) {
                Some("True") => Some(Ready::True),
                Some("False") => Some(Ready::False),
                Some(_) => Some(Ready::Unknown),
                None => None,
            },
            reason: text(shown.map(|c| &c.reason), limits::REASON),
            message,
            revision: revision_of(kind, object)
                .map(|r| SharedText::read(&bounded_text(r, limits::SHORT))),
            generation: object.generation().unwrap_or(0),
            observed_generation: status.and_then(|s| s.observed_generation.0),
            since: since_of(kind, health, ready, object),
            marks: Marks {
                last_handled_reconcile_at: object
                    .status_text(|s| &s.last_handled_reconcile_at)
                    .map(short),
                requested_at: object.annotation(annotations::REQUESTED_AT).map(short),
                suspended_by: annotation(annotations::SUSPENDED_BY)
                    .or_else(|| annotation(annotations::OPERATOR_SUSPENDED_BY))
                    .map(short),
                suspend_reason: annotation(annotations::SUSPEND_REASON)
                    .map(|s| bounded(s, limits::SUSPEND_REASON)),
            }
            .boxed(),
            source: source_of(kind, object, namespace).map(Box::new),
            depends_on: object
                .spec()
                .map(|s| {
                    let needs = match kind {
                        FluxKind::ArtifactGenerator => &s.sources,
                        _ => &s.depends_on,
                    };
                    needs
                        .0
                        .iter()
                        .filter_map(|d| object_ref(d, namespace, ""))
                        .take(limits::DEPENDS_ON)
                        .collect()
                })
                .unwrap_or_default(),
            inventory: status
                .and_then(|s| s.inventory.0)
                .map(|n| Entries::new(u32::try_from(n).unwrap_or(u32::MAX))),
            rollout: Rollout::of(kind, object).map(Box::new),
            fingerprint: 0,
        })
    }

    /// Entries in `status.inventory`: how many objects it applied and owns. None when the kind
    /// (or this Flux version) keeps no inventory.
    pub fn inventory(&self) -> Option<u32> {
        self.inventory.map(Entries::get)
    }

    fn mark(&self, text: impl Fn(&Marks) -> &Option<Box<str>>) -> Option<&str> {
        self.marks.as_deref().and_then(|m| text(m).as_deref())
    }

    /// `status.lastHandledReconcileAt`: the last reconcile request token the controller handled.
    pub fn last_handled_reconcile_at(&self) -> Option<&str> {
        self.mark(|m| &m.last_handled_reconcile_at)
    }

    /// `reconcile.fluxcd.io/requestedAt`: the last reconcile request token written.
    pub fn requested_at(&self) -> Option<&str> {
        self.mark(|m| &m.requested_at)
    }

    /// Who suspended it, from its annotations; None once it is not suspended (a resume that was
    /// not fluxfleet's, `flux resume`, leaves them: stale, [`FluxSummary::stale_suspension`]).
    pub fn suspended_by(&self) -> Option<&str> {
        self.mark(|m| &m.suspended_by).filter(|_| self.suspended)
    }

    /// Why, as whoever suspended it said; None once it is not suspended.
    pub fn suspend_reason(&self) -> Option<&str> {
        self.mark(|m| &m.suspend_reason).filter(|_| self.suspended)
    }

    /// It is not suspended, and still carries who suspended it and why: a suspend fluxfleet
    /// recorded, resumed by something that keeps annotations. The next action fluxfleet takes
    /// on it removes them.
    pub fn stale_suspension(&self) -> bool {
        !self.suspended
            && (self.mark(|m| &m.suspended_by).is_some()
                || self.mark(|m| &m.suspend_reason).is_some())
    }

    /// The marks, to change: boxed first when there are none.
    pub fn marks_mut(&mut self) -> &mut Marks {
        self.marks.get_or_insert_default()
    }

    /// "suspended by alice: flapping" — for a suspended object whose suspender is known.
    pub fn suspension(&self) -> Option<String> {
        if !self.suspended {
            return None;
        }
        let by = self.suspended_by()?;
        Some(match self.suspend_reason() {
            Some(reason) => format!("suspended by {by}: {reason}"),
            None => format!("suspended by {by}"),
        })
    }

    /// See [`FluxSummary::fingerprint`]: the message as its copies share it ([`shared_words`]).
    pub fn compute_fingerprint(&self) -> u64 {
        let mut h = std::hash::DefaultHasher::new();
        (
            self.key.kind,
            &self.key.namespace,
            &self.key.name,
            self.health,
            &self.reason,
            self.message.as_deref().map(shared_words),
        )
            .hash(&mut h);
        h.finish()
    }

    /// Summarises an object that names its own kind in `kind`.
    pub fn from_object(object: &Value) -> Result<FluxSummary, SummaryError> {
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
        let kind =
            FluxKind::from_kind(kind).ok_or_else(|| SummaryError::UnknownKind(kind.to_string()))?;
        FluxSummary::of(kind, object)
    }

    /// Not ready, as `--status not-ready` selects and root causes start from: anything but ready
    /// ([`Health::is_not_ready`]), except that a suspended object is not ready only while its
    /// Ready condition says so — `flux suspend` leaves Ready as the last reconcile left it, and
    /// a suspended object that is Ready holds nothing back.
    pub fn is_not_ready(&self) -> bool {
        match self.health {
            Health::Suspended => self.ready != Some(Ready::True),
            health => health.is_not_ready(),
        }
    }

    /// What `old`, its previous summary, knew and this one's status no longer says: since when
    /// it is not ready, where both are not (since the earlier: a failure retried is one
    /// failure, however often the controller rewrote Ready's time), and what its rollout knew
    /// ([`Rollout::carry`]). Only the clusters' own times: the index never reads a clock.
    pub fn carry(&mut self, old: &FluxSummary) {
        if let (Some(new), Some(old)) = (self.rollout.as_deref_mut(), old.rollout.as_deref()) {
            new.carry(old);
        }
        if !self.is_not_ready() {
            return;
        }
        if old.is_not_ready() {
            self.since = match (old.since, self.since) {
                (Some(then), Some(now)) => Some(then.min(now)),
                (then, now) => then.or(now),
            };
        } else if let Some(ready) = old.since
            && self.since.is_some_and(|since| since < ready)
        {
            // Seen ready since `ready`: it stopped being ready after that, whatever an older
            // failure of the same manifests left in its history.
            self.since = Some(ready);
        }
    }

    /// Whether the last reconcile request written has been handled by the controller.
    pub fn reconcile_handled(&self) -> bool {
        match (self.requested_at(), self.last_handled_reconcile_at()) {
            (Some(requested), Some(handled)) => requested == handled,
            (Some(_), None) => false,
            (None, _) => true,
        }
    }
}

/// REVISION as `flux get` prints it (FACTS §3.3).
fn revision_of<'a>(kind: FluxKind, object: &'a Object) -> Option<&'a str> {
    let status = object.status()?;
    match kind {
        FluxKind::Kustomization => status.last_applied_revision.get(),
        FluxKind::HelmRelease => object
            .history()
            .first()
            .and_then(|e| e.chart_version.get())
            .or_else(|| status.last_applied_revision.get())
            .or_else(|| status.last_attempted_revision.get()),
        FluxKind::ImagePolicy => status
            .latest_ref
            .get()
            .and_then(|r| r.tag.get())
            .or_else(|| status.latest_image.get()),
        FluxKind::ImageRepository => status.last_scan_result.get()?.scan_time.get(),
        FluxKind::ImageUpdateAutomation => status.last_automation_run_time.get(),
        FluxKind::ArtifactGenerator | FluxKind::Alert | FluxKind::Provider | FluxKind::Receiver => {
            None
        }
        _ => status.artifact.get()?.revision.get(),
    }
}

fn object_ref(r: &Ref, default_namespace: &str, default_kind: &str) -> Option<ObjectRef> {
    let name = r.name.get()?;
    let text = |t: &str| -> SharedText { SharedText::read(&bounded_text(t, limits::NAME)) };
    let field = |t: &Text, default: &str| text(t.get().unwrap_or(default));
    Some(ObjectRef {
        kind: field(&r.kind, default_kind),
        namespace: field(&r.namespace, default_namespace),
        name: text(name),
    })
}

/// Where this object gets its artifact from.
fn source_of(kind: FluxKind, object: &Object, namespace: &str) -> Option<ObjectRef> {
    let spec = object.spec()?;
    match kind {
        FluxKind::HelmRelease => match spec.chart_ref.get() {
            Some(chart_ref) => object_ref(chart_ref, namespace, ""),
            None => object_ref(
                spec.chart.get()?.spec.get()?.source_ref.get()?,
                namespace,
                "",
            ),
        },
        FluxKind::ImagePolicy => object_ref(
            spec.image_repository_ref.get()?,
            namespace,
            "ImageRepository",
        ),
        // An ExternalArtifact's `sourceRef` is the generator that produces it.
        FluxKind::Kustomization
        | FluxKind::HelmChart
        | FluxKind::ImageUpdateAutomation
        | FluxKind::ExternalArtifact => object_ref(spec.source_ref.get()?, namespace, ""),
        _ => None,
    }
}

mod status;
#[cfg(test)]
mod tests;
mod wire;
mod words;
