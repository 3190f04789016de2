//! The only code that changes anything on a cluster: it sends the merge patches that
//! [`crate::fleet::verbs::plan`] decided, over the connection the watches use, and follows a
//! reconcile request until the controller has handled it.
//!
//! A [`KubeWriter`] exists only in write mode: [`super::Engine::writer`] wants a [`WriteGrant`], and the
//! only way to get one is [`crate::config::Config::writable`] when some cluster's mode allows
//! writes. A read-only session holds a [`super::KubeReader`], whose type has no way to send a
//! mutating request; the session's writer refuses every cluster whose mode is read-only before
//! it gets here.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::clients::{Clients, Connected, NOT_CONNECTED};
use super::wire::api::{self, Reason, Trouble};
use crate::fleet::notice::NotRecorded;
use crate::fleet::notice::{COMPONENT, Identity, Notice};
use crate::fleet::verbs::{Access, Outcome, Step};
use crate::fleet::{ClusterKey, ObjectKey};
use crate::json::At;
use crate::source::Impersonation;

/// Sends actions to connected clusters: the kubeconfig source's [`crate::source::Write`], which
/// `session::Writer` routes each cluster's actions to. Cheap to clone.
#[derive(Clone)]
pub struct KubeWriter {
    pub(super) clients: Arc<Clients>,
    /// For one request.
    pub(super) timeout: Duration,
    /// Every request sent as this person (`mcp --impersonate`), not as the credentials'.
    pub(super) acting_as: Option<Arc<Impersonation>>,
}

/// The most of an identity's groups kept (a server's list, bounded).
const IDENTITY_GROUPS: usize = 64;

/// Conflicts are retried this many times (a merge patch without resourceVersion rarely meets
/// one; a webhook or an admission race can cause them).
const CONFLICT_RETRIES: u32 = 3;

impl KubeWriter {
    /// This writer, sending every request as `who` (`Impersonate-User`, `Impersonate-Group`):
    /// each cluster's RBAC decides as for that person; the credentials need only `impersonate`.
    pub fn acting_as(&self, who: &Arc<Impersonation>) -> KubeWriter {
        KubeWriter {
            acting_as: Some(who.clone()),
            ..self.clone()
        }
    }

    /// `cluster`'s connection as this writer sends on it: as the person it acts as, with an
    /// identity of its own (never the credentials' review, cached for the connection).
    fn connected(&self, cluster: &ClusterKey) -> Option<Connected> {
        let connected = self.clients.get(cluster)?;
        Some(match &self.acting_as {
            None => connected,
            Some(who) => connected.sent_as(who.clone()),
        })
    }

    /// Sends `steps` in order to `cluster`. A step that must be handled before the next (a
    /// source) is waited for; with `wait` the last one is too, so that `Done` means the
    /// controller has handled the request (`status.lastHandledReconcileAt == token`).
    pub async fn apply(
        &self,
        cluster: &ClusterKey,
        steps: &[Step],
        token: &str,
        wait: Option<Duration>,
    ) -> Outcome {
        self.apply_noting(cluster, steps, (token, wait), None)
            .await
            .0
    }

    /// [`KubeWriter::apply`], recording `notice` as an Event on the last step's object once its
    /// patch is accepted — the object named as the patch's answer names it (its `apiVersion` and
    /// `uid`), so no request more than the Event's.
    pub async fn apply_noting(
        &self,
        cluster: &ClusterKey,
        steps: &[Step],
        (token, wait): (&str, Option<Duration>),
        notice: Option<&Notice>,
    ) -> (Outcome, Option<Result<(), NotRecorded>>) {
        let Some(connected) = self.connected(cluster) else {
            return (Outcome::Unreachable(NOT_CONNECTED.into()), None);
        };
        let last = steps.len().saturating_sub(1);
        // `wait` bounds every wait of the request together: a source's, then the object's.
        let deadline = wait.map(|w| tokio::time::Instant::now() + w);
        let left = || deadline.map(|d| d.saturating_duration_since(tokio::time::Instant::now()));
        let mut recorded = None;
        for (i, step) in steps.iter().enumerate() {
            let (outcome, involved) = self.patch(&connected, &step.key, &step.patch).await;
            if !outcome.is_done() {
                return (outcome, recorded);
            }
            if let (Some(notice), true) = (notice, i == last) {
                recorded = Some(match involved {
                    Some(involved) => self.record(&connected, &step.key, &involved, notice).await,
                    None => Err(NotRecorded::Failed(
                        "the patch's answer did not name the object (apiVersion, uid)".into(),
                    )),
                });
            }
            let within = if step.wait {
                left().or(Some(self.timeout * 10))
            } else if i == last {
                left()
            } else {
                None
            };
            if let Some(within) = within {
                let handled = self.handled(&connected, &step.key, token, within).await;
                if !handled.is_done() {
                    return (handled, recorded);
                }
            }
        }
        (Outcome::Done, recorded)
    }

    /// Who `cluster` authenticates our requests as — the user name from a `SelfSubjectReview`
    /// (what `kubectl auth whoami` shows), asked once per connection. None when the cluster is
    /// not connected or does not answer the review (before Kubernetes 1.27, or not allowed).
    pub async fn identity(&self, cluster: &ClusterKey) -> Option<Arc<Identity>> {
        let connected = self.connected(cluster)?;
        let asking = async {
            let review = serde_json::json!({
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "SelfSubjectReview",
            });
            let path = "/apis/authentication.k8s.io/v1/selfsubjectreviews";
            let answer = api::post_json::<Value>(&connected.http, path, &review);
            let answer = tokio::time::timeout(self.timeout, answer)
                .await
                .ok()?
                .ok()?;
            let name = answer
                .at("/status/userInfo/username")
                .and_then(Value::as_str)?;
            let groups = answer
                .at("/status/userInfo/groups")
                .and_then(Value::as_array)
                .map(|groups| {
                    groups
                        .iter()
                        .filter_map(Value::as_str)
                        .take(IDENTITY_GROUPS)
                        .map(|g| crate::units::truncate(g, 256).to_string())
                        .collect()
                })
                .unwrap_or_default();
            // Shown in the journal and on Events: a server's text, bounded.
            Some(Arc::new(Identity {
                username: crate::units::truncate(name, 256).to_string(),
                groups,
            }))
        };
        connected.identity.get_or_init(|| asking).await.clone()
    }

    /// Whether `cluster` lets our requests do `verb` on `key`: a `SelfSubjectAccessReview` for
    /// the object (its group, plural, namespace and name), as the Flux web UI asks.
    pub async fn may(&self, cluster: &ClusterKey, key: &ObjectKey, verb: &str) -> Access {
        let Some(connected) = self.connected(cluster) else {
            return Access::Unanswered(NOT_CONNECTED.into());
        };
        let review = serde_json::json!({
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {
                "group": key.kind.group(),
                "resource": key.kind.plural(),
                "namespace": &*key.namespace,
                "name": &*key.name,
                "verb": verb,
            }},
        });
        let path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
        let asked = api::post_json::<Value>(&connected.http, path, &review);
        let answer = match tokio::time::timeout(self.timeout, asked).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(trouble)) => return Access::Unanswered(trouble.into_failure().message),
            Err(_) => {
                return Access::Unanswered(format!(
                    "no answer within {}",
                    crate::units::format_duration(self.timeout)
                ));
            }
        };
        // A server's words, bounded.
        let said = |at: &str| {
            answer
                .at(at)
                .and_then(Value::as_str)
                .map(|s| crate::units::one_line(&crate::units::truncate(s, 512)).into_owned())
                .unwrap_or_default()
        };
        match answer.at("/status/allowed").and_then(Value::as_bool) {
            Some(true) => Access::Allowed,
            Some(false) => {
                let mut why = said("/status/reason");
                let error = said("/status/evaluationError");
                if !error.is_empty() {
                    why = if why.is_empty() {
                        error
                    } else {
                        format!("{why}; {error}")
                    };
                }
                Access::Denied(why)
            }
            None => Access::Unanswered("the access review's answer says neither yes nor no".into()),
        }
    }

    /// Sends one merge patch; the object as its answer names it (None when the answer could
    /// not be read as one: the patch was accepted all the same).
    async fn patch(
        &self,
        connected: &Connected,
        key: &ObjectKey,
        patch: &Value,
    ) -> (Outcome, Option<Involved>) {
        let path = match connected.object_path(key) {
            Ok(path) => path,
            Err(e) => return (Outcome::Refused(e.to_string()), None),
        };
        let mut attempt = 0;
        loop {
            let sent = api::merge_patch_json::<Involved>(&connected.http, &path, patch);
            let (outcome, involved) = match tokio::time::timeout(self.timeout, sent).await {
                Err(_) => (
                    Outcome::TimedOut(format!(
                        "no answer within {}",
                        crate::units::format_duration(self.timeout)
                    )),
                    None,
                ),
                Ok(Ok(Ok(involved))) => (Outcome::Done, Some(involved)),
                Ok(Ok(Err(_unreadable))) => (Outcome::Done, None),
                Ok(Err(trouble)) => (of_trouble(trouble), None),
            };
            if matches!(outcome, Outcome::Conflict(_)) && attempt < CONFLICT_RETRIES {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(100 * u64::from(attempt))).await;
                continue;
            }
            return (outcome, involved);
        }
    }

    /// Records `notice` as a `core/v1` Event on `key` (`involved`: as the server names it, so
    /// that `kubectl describe` finds the Event by its uid), in its namespace, reported by
    /// fluxfleet.
    async fn record(
        &self,
        connected: &Connected,
        key: &ObjectKey,
        involved: &Involved,
        notice: &Notice,
    ) -> Result<(), NotRecorded> {
        let event = event(key, involved, notice, jiff::Timestamp::now());
        let path = format!("/api/v1/namespaces/{}/events", key.namespace);
        let sent = api::post_json::<serde::de::IgnoredAny>(&connected.http, &path, &event);
        match tokio::time::timeout(self.timeout, sent).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(trouble)) => Err(not_recorded(trouble)),
            Err(_) => Err(NotRecorded::Failed(
                "the event was not accepted in time".into(),
            )),
        }
    }

    /// Polls the object until its controller has handled `token`, or `within` passes.
    async fn handled(
        &self,
        connected: &Connected,
        key: &ObjectKey,
        token: &str,
        within: Duration,
    ) -> Outcome {
        let path = match connected.object_path(key) {
            Ok(path) => path,
            Err(e) => return Outcome::Refused(e.to_string()),
        };
        let deadline = tokio::time::Instant::now() + within;
        let mut delay = Duration::from_millis(200);
        loop {
            let read = api::get_json::<Value>(&connected.http, &path);
            match tokio::time::timeout(self.timeout, read).await {
                Ok(Ok((object, _))) => {
                    let handled = object
                        .at("/status/lastHandledReconcileAt")
                        .and_then(Value::as_str);
                    if handled == Some(token) {
                        return Outcome::Done;
                    }
                }
                Ok(Err(trouble)) if trouble.reason() == Some(Reason::NotFound) => {
                    return Outcome::NotFound;
                }
                // Transient trouble while waiting: keep polling until the deadline.
                Ok(Err(_)) | Err(_) => {}
            }
            if tokio::time::Instant::now() + delay > deadline {
                return Outcome::TimedOut(format!(
                    "the controller did not handle the request within {}",
                    crate::units::format_duration(within)
                ));
            }
            // Polling interval, not synchronisation: the read above decides.
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(2));
        }
    }
}

impl crate::source::Write for KubeWriter {
    fn apply<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        steps: &'a [Step],
        token: &'a str,
        wait: Option<Duration>,
    ) -> futures::future::BoxFuture<'a, Outcome> {
        Box::pin(KubeWriter::apply(self, cluster, steps, token, wait))
    }

    fn identity<'a>(
        &'a self,
        cluster: &'a ClusterKey,
    ) -> futures::future::BoxFuture<'a, Option<Arc<Identity>>> {
        Box::pin(KubeWriter::identity(self, cluster))
    }

    fn apply_noting<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        steps: &'a [Step],
        waiting: (&'a str, Option<Duration>),
        notice: &'a Notice,
    ) -> futures::future::BoxFuture<'a, (Outcome, Option<Result<(), NotRecorded>>)> {
        Box::pin(KubeWriter::apply_noting(
            self,
            cluster,
            steps,
            waiting,
            Some(notice),
        ))
    }

    fn acting_as(&self, who: &Arc<Impersonation>) -> Option<Arc<dyn crate::source::Write>> {
        Some(Arc::new(KubeWriter::acting_as(self, who)))
    }

    fn may<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        key: &'a ObjectKey,
        verb: &'static str,
    ) -> futures::future::BoxFuture<'a, Access> {
        Box::pin(KubeWriter::may(self, cluster, key, verb))
    }

    fn handled<'a>(
        &'a self,
        cluster: &'a ClusterKey,
        key: &'a ObjectKey,
        token: &'a str,
        within: Duration,
    ) -> futures::future::BoxFuture<'a, Outcome> {
        Box::pin(async move {
            let Some(connected) = self.connected(cluster) else {
                return Outcome::Unreachable(NOT_CONNECTED.into());
            };
            KubeWriter::handled(self, &connected, key, token, within).await
        })
    }
}

/// What an Event needs of the object it is about, read from the patch's answer (the rest of
/// the object is skipped as it is read).
#[derive(serde::Deserialize)]
struct Involved {
    #[serde(rename = "apiVersion")]
    api_version: String,
    metadata: InvolvedMeta,
}

#[derive(serde::Deserialize)]
struct InvolvedMeta {
    uid: String,
}

/// The `core/v1` Event of `notice` on `key` at `now`, as `kubectl get events` and `kubectl
/// describe` show events: type Normal, the object as `involvedObject`, fluxfleet as the source.
fn event(key: &ObjectKey, object: &Involved, notice: &Notice, now: jiff::Timestamp) -> Value {
    // Kubernetes' times are whole seconds.
    let at = jiff::Timestamp::from_second(now.as_second())
        .unwrap_or(now)
        .to_string();
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "generateName": format!("{}.", key.name),
            "namespace": &*key.namespace,
            "annotations": notice
                .annotations
                .iter()
                .map(|(k, v)| (k.to_string(), Value::from(v.as_str())))
                .collect::<serde_json::Map<_, _>>(),
        },
        "involvedObject": {
            "apiVersion": object.api_version,
            "kind": key.kind.to_string(),
            "namespace": &*key.namespace,
            "name": &*key.name,
            "uid": object.metadata.uid,
        },
        "type": "Normal",
        "reason": notice.reason,
        "message": notice.message,
        "source": { "component": COMPONENT },
        "reportingComponent": COMPONENT,
        "reportingInstance": "",
        "firstTimestamp": at,
        "lastTimestamp": at,
        "count": 1,
    })
}

fn not_recorded(trouble: Trouble) -> NotRecorded {
    match trouble.reason() {
        Some(Reason::Forbidden) => NotRecorded::Forbidden(trouble.into_failure().message),
        _ => NotRecorded::Failed(trouble.into_failure().message),
    }
}

fn of_trouble(trouble: Trouble) -> Outcome {
    match trouble.reason() {
        Some(Reason::Forbidden) => Outcome::Forbidden(trouble.into_failure().message),
        Some(Reason::NotFound) => Outcome::NotFound,
        Some(Reason::Conflict) => Outcome::Conflict(trouble.into_failure().message),
        Some(_) => Outcome::Failed(trouble.into_failure().message),
        None => Outcome::Unreachable(trouble.into_failure().message),
    }
}
