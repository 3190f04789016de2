//! The seam between where the fleet's state comes from and everything that shows it or acts on
//! it. A [`Source`] names its clusters by a stable [`ClusterKey`] and sends [`Change`]s through
//! the [`Sink`] it is given; the index alone gives clusters their ids. Where it can, a source
//! also reads objects' events and YAML ([`Read`]) and carries out actions ([`Write`]).
//!
//! The kube engine (`k8s::Kube`) is the first source; the session (`crate::session`) registers
//! sources, owns the index they feed, and routes reads and writes to the source of each cluster.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use jiff::Timestamp;
use tokio::sync::mpsc;

use crate::config::WriteGrant;
use crate::fleet::index::{Change, Event};
use crate::fleet::notice::{Identity, NotRecorded, Notice};
use crate::fleet::read::ReadError;
use crate::fleet::verbs::{Access, Outcome, Step};
use crate::fleet::workload::Evidence;
use crate::fleet::{ClusterInfo, ClusterKey, ObjectEvent, ObjectKey, SourceId};

/// Where fleet state comes from: implement this and register it with the session.
pub trait Source: Send {
    /// The clusters it knows before it starts. The index holds them at once, and a session is
    /// settled once each of them has answered; clusters found later join with
    /// [`Change::Added`].
    fn clusters(&self) -> Vec<ClusterInfo>;

    /// Starts sending changes into `sink`, from tasks of its own; returns at once.
    fn start(&mut self, sink: Sink);

    /// Reads its clusters' objects (events, YAML), if it can.
    fn reader(&self) -> Option<Arc<dyn Read>> {
        None
    }

    /// Carries out actions on its clusters, if it can; only with the proof that writes are
    /// enabled.
    fn writer(&self, _grant: &WriteGrant) -> Option<Arc<dyn Write>> {
        None
    }

    /// Stops everything it started and waits for it to end.
    fn stop(&mut self) -> BoxFuture<'_, ()>;
}

/// One-off reads of an object on one of a source's clusters; each failure says what the caller
/// can do ([`ReadError`]).
pub trait Read: Send + Sync {
    /// The events whose involved object is one of `objects` (an object, then what `flux events
    /// --for` shows beside it: `fleet::told_with`), newest first.
    fn events<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        objects: &'a [ObjectKey],
    ) -> BoxFuture<'a, Result<Vec<ObjectEvent>, ReadError>>;

    /// The object as the cluster has it now.
    fn object<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        object: &'a ObjectKey,
    ) -> BoxFuture<'a, Result<serde_json::Value, ReadError>>;

    /// What broke inside the Kustomization or HelmRelease `object`: its workloads, their pods,
    /// Warning events and log tails, read now (read-only, bounded).
    fn workloads<'a>(
        &'a self,
        _cluster: &'a ClusterKey,
        _object: &'a ObjectKey,
    ) -> BoxFuture<'a, Result<Evidence, ReadError>> {
        Box::pin(async {
            Err(ReadError::NoKubeconfig(
                "where this cluster's state comes from, its workloads cannot be read".into(),
            ))
        })
    }

    /// Where `asked` on `cluster` comes from: its owners up to what Flux applied, and the Flux
    /// objects that applied it, read now (read-only, bounded).
    fn trace<'a>(
        &'a self,
        _cluster: &'a ClusterKey,
        _asked: &'a crate::fleet::trace::Asked,
    ) -> BoxFuture<'a, Result<crate::fleet::trace::ClusterChain, ReadError>> {
        Box::pin(async {
            Err(ReadError::NoKubeconfig(
                "where this cluster's state comes from, it cannot be traced".into(),
            ))
        })
    }

    /// The events of every `kind` object in `namespace` on `cluster`, newest first, read now.
    fn kind_events<'a>(
        &'a self,
        _cluster: &'a ClusterKey,
        _namespace: &'a str,
        _kind: crate::fleet::FluxKind,
    ) -> BoxFuture<'a, Result<Vec<ObjectEvent>, ReadError>> {
        Box::pin(async {
            Err(ReadError::NoKubeconfig(
                "where this cluster's state comes from, its events cannot be read".into(),
            ))
        })
    }

    /// What the Kustomization or HelmRelease `root` put on `cluster`, followed down (read-only,
    /// bounded).
    fn tree<'a>(
        &'a self,
        _cluster: &'a ClusterKey,
        _root: &'a ObjectKey,
    ) -> BoxFuture<'a, Result<crate::fleet::tree::ClusterTree, ReadError>> {
        Box::pin(async {
            Err(ReadError::NoKubeconfig(
                "where this cluster's state comes from, its trees cannot be read".into(),
            ))
        })
    }

    /// A kubeconfig that reaches `cluster` (one context, its cluster and user), for a program
    /// the user hands it to; an error saying why where this source has none.
    fn kubeconfig(&self, _cluster: &ClusterKey) -> Result<kube::config::Kubeconfig, ReadError> {
        Err(ReadError::NoKubeconfig(
            "where this cluster's state comes from, no kubeconfig of yours reaches it".into(),
        ))
    }

    /// What changed in the fleet since `since`, oldest first, where this source keeps a
    /// history (collectors through NATS do).
    fn history(
        &self,
        _since: Timestamp,
    ) -> BoxFuture<'_, Result<Vec<crate::fleet::history::RecordedChange>, ReadError>> {
        Box::pin(async { Err(ReadError::NoHistory) })
    }

    /// The user opened `cluster`: a source that only summarizes it watches its objects from
    /// now on, for a while. Others have nothing to do.
    fn open(&self, _cluster: &ClusterKey) {}
}

/// Sends the patches of an action to one of a source's clusters.
/// Who requests are sent as (`kubectl --as --as-group`): a person's name and groups, checked
/// once as header values.
#[derive(Debug)]
pub struct Impersonation {
    user: http::HeaderValue,
    groups: Vec<http::HeaderValue>,
    identity: Identity,
}

/// Why a person cannot be impersonated.
#[derive(Debug, thiserror::Error)]
pub enum Unsendable {
    /// A control character in it: it cannot be sent in a header.
    #[error("{0} cannot be sent as an identity to impersonate")]
    NotAHeader(String),
    /// One of Kubernetes's own names (`system:masters`, `system:serviceaccount:…`,
    /// `system:kube-controller-manager`): a token naming it would borrow the cluster's own
    /// powers through the server's right to impersonate anyone.
    #[error(
        "{0} is one of Kubernetes's own names (system:…), never a person's: not impersonated \
         (give --impersonate-prefix, so that a token's names cannot be Kubernetes's)"
    )]
    Reserved(String),
}

/// The names Kubernetes keeps for itself: its users, groups and service accounts.
const RESERVED: &str = "system:";

impl Impersonation {
    pub fn of(who: &Identity) -> Result<Impersonation, Unsendable> {
        let value = |name: &str| {
            let quoted = || format!("{:?}", name.escape_debug().to_string());
            if name.starts_with(RESERVED) {
                return Err(Unsendable::Reserved(quoted()));
            }
            http::HeaderValue::from_str(name).map_err(|_| Unsendable::NotAHeader(quoted()))
        };
        Ok(Impersonation {
            user: value(&who.username)?,
            groups: who
                .groups
                .iter()
                .map(|g| value(g))
                .collect::<Result<_, _>>()?,
            identity: who.clone(),
        })
    }

    /// `Impersonate-User`.
    pub fn user(&self) -> &http::HeaderValue {
        &self.user
    }

    /// One `Impersonate-Group` each.
    pub fn groups(&self) -> &[http::HeaderValue] {
        &self.groups
    }

    /// Who, as the journal and Events name them.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }
}

pub trait Write: Send + Sync {
    /// Sends `steps` in order; with `wait`, `Done` means the controller has handled the request
    /// (`status.lastHandledReconcileAt == token`).
    fn apply<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        steps: &'a [Step],
        token: &'a str,
        wait: Option<Duration>,
    ) -> BoxFuture<'a, Outcome>;

    /// Who `cluster` authenticates this source's requests as (`SelfSubjectReview`), where the
    /// cluster says; for the audit journal.
    fn identity<'a>(&'a self, cluster: &'a ClusterKey) -> BoxFuture<'a, Option<Arc<Identity>>>;

    /// [`Write::apply`], and once the last step (the target itself) is accepted, `notice` recorded
    /// as a Kubernetes Event on it, so that the team sees it where it looks (`kubectl describe`,
    /// `flux events`): the outcome, and what became of the Event when one was to be recorded. A
    /// source that cannot record Events says so.
    fn apply_noting<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        steps: &'a [Step],
        (token, wait): (&'a str, Option<Duration>),
        notice: &'a Notice,
    ) -> BoxFuture<'a, (Outcome, Option<Result<(), NotRecorded>>)> {
        let _ = notice;
        Box::pin(async move {
            let outcome = self.apply(cluster, steps, token, wait).await;
            let recorded = outcome.is_done().then_some(Err(NotRecorded::Unsupported));
            (outcome, recorded)
        })
    }

    /// This source's writer sending every request as `who` (`Impersonate-User`,
    /// `Impersonate-Group`), so that each cluster's RBAC decides as for that person. A source
    /// that cannot says so; the session then refuses its clusters.
    fn acting_as(&self, who: &Arc<Impersonation>) -> Option<Arc<dyn Write>> {
        let _ = who;
        None
    }

    /// Whether `cluster` lets this source's requests do Flux's `verb` (`suspend`, `resume`,
    /// `reconcile`) on `key`: a `SelfSubjectAccessReview`, as the Flux web UI asks before an
    /// action. A source that cannot ask says so, and the check refuses.
    fn may<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        key: &'a ObjectKey,
        verb: &'static str,
    ) -> BoxFuture<'a, Access> {
        let _ = (cluster, key, verb);
        Box::pin(async {
            Access::Unanswered(
                "where this cluster's state comes from, access cannot be asked".into(),
            )
        })
    }

    /// Reads `key` until its controller has handled `token` or `within` passes: only for an
    /// object no watch of the session covers.
    fn handled<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        key: &'a ObjectKey,
        token: &'a str,
        within: Duration,
    ) -> BoxFuture<'a, Outcome>;
}

/// Where a source sends its changes. Cheap to clone; one per registered source.
#[derive(Clone)]
pub struct Sink {
    source: SourceId,
    events: mpsc::Sender<Event>,
}

/// The session is gone (shut down, or it stopped reading).
#[derive(Debug)]
pub struct Closed;

impl Sink {
    pub fn new(source: SourceId, events: mpsc::Sender<Event>) -> Sink {
        Sink { source, events }
    }

    /// Sends one change about `cluster`, stamped now. When the session falls behind this waits,
    /// so that memory does not grow.
    pub async fn send(&self, cluster: &ClusterKey, change: Change) -> Result<(), Closed> {
        let change = match change {
            // The index files it under the event's key; the source is the sink's to say.
            Change::Added(mut info) => {
                info.source = self.source;
                Change::Added(info)
            }
            other => other,
        };
        let event = Event {
            cluster: cluster.clone(),
            at: Timestamp::now(),
            change,
        };
        self.events.send(event).await.map_err(|_| Closed)
    }
}

/// An object as YAML for a person, without `metadata.managedFields` (the field managers' bookkeeping,
/// longer than the rest and read by nobody looking at the object).
pub fn as_yaml(mut object: serde_json::Value) -> String {
    if let Some(meta) = object
        .get_mut("metadata")
        .and_then(serde_json::Value::as_object_mut)
    {
        meta.remove("managedFields");
    }
    serde_saphyr::to_string(&object).unwrap_or_else(|e| format!("# cannot show as YAML: {e}"))
}

#[cfg(test)]
mod tests {
    use super::{Impersonation, Unsendable};
    use crate::fleet::notice::Identity;

    fn of(username: &str, groups: &[&str]) -> Result<Impersonation, Unsendable> {
        Impersonation::of(&Identity {
            username: username.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
        })
    }

    #[test]
    fn kubernetes_own_names_are_never_impersonated() {
        // A token whose groups say system:masters, on a server without a prefix: refused, not
        // sent as cluster-admin.
        for (user, groups) in [
            ("alice", &["dev-team", "system:masters"][..]),
            ("system:kube-controller-manager", &[][..]),
            (
                "system:serviceaccount:flux-system:kustomize-controller",
                &[][..],
            ),
        ] {
            let refused = of(user, groups).unwrap_err();
            assert!(matches!(refused, Unsendable::Reserved(_)), "{refused}");
            assert!(refused.to_string().contains("--impersonate-prefix"));
        }
        // Behind a prefix, the same claims are a person's.
        let sent = of("oidc:alice", &["oidc:system:masters"]).unwrap();
        assert_eq!(sent.groups()[0], "oidc:system:masters");
        assert!(matches!(
            of("alice\n", &[]).unwrap_err(),
            Unsendable::NotAHeader(_)
        ));
    }
}
