//! Reading a Flux object's workloads from one connected cluster, on demand and read-only (GET
//! and LIST only; Secrets are never asked for): the Kustomization's inventory and what its
//! health check names, or what helm-controller labels as a HelmRelease's; each workload, its
//! pods by its selector (one page), the namespace's Warning events (one page), and the log tails
//! of the containers that fail — every read bounded in time and bytes, the whole within a byte
//! budget. A read that fails is named with its resource and kept beside what was read.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde_json::Value;

use super::wire::api::{self, Http, Reason, Trouble};
use super::wire::body;
use crate::fleet::read::query_escape;
use crate::fleet::workload::{
    Evidence, Kind, Log, ReadError, ResourceUnread, Workload, WorkloadRef, limits, parse,
};
use crate::fleet::{FluxKind, ObjectKey, Phase};

/// The most of one JSON answer read (a page of pods or events), within the budget.
const ANSWER_LIMIT: usize = 4 * 1024 * 1024;

/// One read of one object's workloads (or one trace): the connection, the time each request
/// may take, and what is left of the byte budget.
pub(super) struct Reading<'a> {
    http: &'a Http,
    timeout: Duration,
    left: usize,
    requests: u32,
    over_budget: bool,
}

impl Reading<'_> {
    pub(super) fn new(http: &Http, timeout: Duration, budget: usize) -> Reading<'_> {
        Reading {
            http,
            timeout,
            left: budget,
            requests: 0,
            over_budget: false,
        }
    }

    pub(super) async fn json(&mut self, path: &str) -> Result<Value, ReadError> {
        if self.left == 0 {
            self.over_budget = true;
            return Err(ReadError::OverBudget(limits::CLUSTER_BYTES));
        }
        self.requests += 1;
        let limit = self.left.min(ANSWER_LIMIT);
        let reading = async {
            let response = api::get(self.http, path).await.map_err(error_of)?;
            let received = body::read(response, limit).await.map_err(|e| match e {
                body::BodyError::TooLarge => ReadError::OverBudget(limits::CLUSTER_BYTES),
                body::BodyError::Broken(e) => ReadError::Unreachable(crate::errors::chain(&*e)),
            })?;
            let size = received.len();
            let value: Value = received
                .json()
                .map_err(|e| ReadError::Server(format!("not a Kubernetes answer: {e}")))?;
            Ok::<_, ReadError>((value, size))
        };
        match tokio::time::timeout(self.timeout, reading).await {
            Err(_) => Err(ReadError::TimedOut(self.timeout)),
            Ok(Err(ReadError::OverBudget(n))) => {
                self.over_budget = true;
                self.left = 0;
                Err(ReadError::OverBudget(n))
            }
            Ok(Err(e)) => Err(e),
            Ok(Ok((value, size))) => {
                self.left = self.left.saturating_sub(size);
                Ok(value)
            }
        }
    }

    /// A container's log: at most [`limits::LOG_BYTES`] read, whatever the server sends;
    /// whether it was cut, and whether the server answered it has none (204 No Content).
    async fn log(&mut self, path: &str) -> Result<(bytes::Bytes, parse::LogRead), ReadError> {
        self.requests += 1;
        let cap = limits::LOG_BYTES.min(self.left);
        let reading = async {
            let response = api::get(self.http, path).await.map_err(error_of)?;
            let no_content = response.status() == http::StatusCode::NO_CONTENT;
            let read = body::read_capped(response, cap).await.map_err(|e| match e {
                body::BodyError::TooLarge => ReadError::OverBudget(limits::CLUSTER_BYTES),
                body::BodyError::Broken(e) => ReadError::Unreachable(crate::errors::chain(&*e)),
            });
            read.map(|(bytes, cut)| (bytes, parse::LogRead { cut, no_content }))
        };
        let (bytes, read) = tokio::time::timeout(self.timeout, reading)
            .await
            .map_err(|_| ReadError::TimedOut(self.timeout))??;
        self.left = self.left.saturating_sub(bytes.len());
        Ok((bytes, read))
    }
}

/// What a failed request means for the caller.
pub(super) fn error_of(trouble: Trouble) -> ReadError {
    match trouble.reason() {
        Some(Reason::Forbidden) => ReadError::Forbidden(trouble.into_failure().message),
        Some(Reason::NotFound) => ReadError::NotFound,
        Some(Reason::BadRequest) => ReadError::Rejected(trouble.into_failure().message),
        Some(_) => ReadError::Server(trouble.into_failure().message),
        None => {
            let failure = trouble.into_failure();
            if failure.phase == Phase::TimedOut {
                ReadError::TimedOut(api::REQUEST_TIMEOUT)
            } else {
                ReadError::Unreachable(failure.message)
            }
        }
    }
}

fn resource(kind: Kind) -> String {
    format!("{}.{}", kind.plural(), kind.group())
}

fn workload_path(id: &WorkloadRef) -> String {
    format!(
        "/apis/{}/v1/namespaces/{}/{}/{}",
        id.kind.group(),
        id.namespace,
        id.kind.plural(),
        id.name
    )
}

/// Reads the workloads of the Flux object `key` at `object_path` over `http`.
pub(super) async fn read(
    http: &Http,
    object_path: &str,
    key: &ObjectKey,
    timeout: Duration,
) -> Result<Evidence, ReadError> {
    let mut reading = Reading {
        http,
        timeout,
        left: limits::CLUSTER_BYTES,
        requests: 0,
        over_budget: false,
    };
    let mut evidence = Evidence::default();
    let object = reading.json(object_path).await?;
    let mut found: Vec<(WorkloadRef, Option<Value>)> = match key.kind {
        FluxKind::HelmRelease => helm_workloads(&mut reading, key, &mut evidence).await,
        _ => parse::kustomization_workloads(&object)
            .into_iter()
            .map(|r| (r, None))
            .collect(),
    };
    evidence.cut = found.len() > limits::WORKLOADS;
    found.truncate(limits::WORKLOADS);
    let mut events: HashMap<String, Result<Value, ReadError>> = HashMap::new();
    for (id, value) in found {
        let value = match value {
            Some(value) => Ok(value),
            None => reading.json(&workload_path(&id)).await,
        };
        let mut workload = match value {
            Ok(value) => {
                let mut workload = parse::workload(id.clone(), &value);
                pods(&mut reading, &mut workload, &value).await;
                workload
            }
            Err(ReadError::NotFound) => parse::missing(id.clone()),
            Err(why) => {
                let mut workload = parse::workload(id.clone(), &Value::Null);
                workload.unread.push(ResourceUnread {
                    resource: resource(id.kind),
                    why,
                });
                evidence.workloads.push(workload);
                continue;
            }
        };
        if !workload.missing {
            let namespace = id.namespace.clone();
            if !events.contains_key(&namespace) {
                let path = format!(
                    "/api/v1/namespaces/{namespace}/events?fieldSelector={}&limit={}",
                    query_escape("type=Warning"),
                    limits::EVENTS_LISTED
                );
                events.insert(namespace.clone(), reading.json(&path).await);
            }
            match events.get(&namespace) {
                Some(Ok(list)) => {
                    let mut about: HashSet<String> = workload
                        .pods
                        .iter()
                        .map(|p| format!("Pod/{}", p.name))
                        .collect();
                    about.insert(format!("{}/{}", id.kind, id.name));
                    workload.events = parse::events(list, &about, &id.name);
                }
                Some(Err(why)) => workload.unread.push(ResourceUnread {
                    resource: "events".into(),
                    why: why.clone(),
                }),
                None => {}
            }
            logs(&mut reading, &mut workload).await;
        }
        evidence.workloads.push(workload);
    }
    evidence.requests = reading.requests;
    evidence.over_budget = reading.over_budget;
    Ok(evidence)
}

/// What helm-controller labels as the release's (`helm.toolkit.fluxcd.io/name` and
/// `/namespace`, since helm-controller v0.10), in every namespace, kind by kind.
async fn helm_workloads(
    reading: &mut Reading<'_>,
    key: &ObjectKey,
    evidence: &mut Evidence,
) -> Vec<(WorkloadRef, Option<Value>)> {
    let selector = query_escape(&format!(
        "helm.toolkit.fluxcd.io/name={},helm.toolkit.fluxcd.io/namespace={}",
        key.name, key.namespace
    ));
    let mut out = Vec::new();
    for kind in Kind::ALL {
        let path = format!(
            "/apis/{}/v1/{}?labelSelector={selector}&limit={}",
            kind.group(),
            kind.plural(),
            limits::WORKLOADS + 1
        );
        match reading.json(&path).await {
            Ok(list) => {
                for item in list
                    .get("items")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let text = |p: &str| item.pointer(p).and_then(Value::as_str).unwrap_or("");
                    let id = WorkloadRef {
                        kind,
                        namespace: crate::fleet::workload::parse::bounded_name(text(
                            "/metadata/namespace",
                        )),
                        name: crate::fleet::workload::parse::bounded_name(text("/metadata/name")),
                    };
                    out.push((id, Some(item.clone())));
                }
            }
            // A kind the cluster does not serve has nothing of the release's.
            Err(ReadError::NotFound) => {}
            Err(why) => evidence.unread.push(ResourceUnread {
                resource: resource(kind),
                why,
            }),
        }
    }
    out
}

/// The workload's pods by its selector: one page, the worst kept.
async fn pods(reading: &mut Reading<'_>, workload: &mut Workload, value: &Value) {
    if workload.id.kind == Kind::CronJob {
        return;
    }
    let Some(selector) = parse::selector(value) else {
        return;
    };
    let path = format!(
        "/api/v1/namespaces/{}/pods?labelSelector={}&limit={}",
        workload.id.namespace,
        query_escape(&selector),
        limits::PODS_LISTED
    );
    match reading.json(&path).await {
        Ok(list) => {
            let (pods, total, cut) = parse::pods(&list);
            workload.pods = pods;
            workload.pods_total = total;
            workload.pods_cut = cut;
        }
        Err(why) => workload.unread.push(ResourceUnread {
            resource: "pods".into(),
            why,
        }),
    }
}

/// Log tails of the containers that fail: the instance before for one that restarts, the
/// current one for one that ended or runs unready; one per distinct way of failing, at most
/// [`limits::LOGS`].
async fn logs(reading: &mut Reading<'_>, workload: &mut Workload) {
    let namespace = workload.id.namespace.clone();
    let mut ways: Vec<(String, String)> = Vec::new();
    for pod in &mut workload.pods {
        let pod_ready = pod.ready;
        for container in &mut pod.containers {
            let crashing = container
                .waiting
                .as_ref()
                .is_some_and(|(r, _)| r == "CrashLoopBackOff")
                || (container.waiting.is_some() && container.restarts > 0);
            let ended = container.terminated.as_ref().is_some_and(|t| t.1 != 0);
            let unready = !container.ready && !pod_ready && container.waiting.is_none() && !ended;
            if !(crashing || ended || unready) {
                continue;
            }
            let way = (
                container.name.clone(),
                container
                    .waiting
                    .as_ref()
                    .map(|w| w.0.clone())
                    .unwrap_or_else(|| format!("ended:{ended}")),
            );
            if ways.contains(&way) || ways.len() >= limits::LOGS {
                continue;
            }
            ways.push(way);
            let previous = crashing;
            let path = format!(
                "/api/v1/namespaces/{namespace}/pods/{}/log?container={}&tailLines={}&limitBytes={}{}",
                pod.name,
                query_escape(&container.name),
                limits::LOG_LINES,
                limits::LOG_BYTES,
                if previous { "&previous=true" } else { "" }
            );
            container.log = Some(match reading.log(&path).await {
                Ok((bytes, read)) => parse::log(&bytes, read, previous),
                Err(why) => Log {
                    previous,
                    lines: Vec::new(),
                    cut: false,
                    unread: Some(ResourceUnread {
                        resource: "pods/log".into(),
                        why,
                    }),
                    empty: None,
                },
            });
        }
    }
}
