//! A workload's objects as the API server serves them — the Deployment or Job, its ReplicaSets,
//! its pods — written for its fault the way the controllers and the kubelet write them (what
//! its pods say, their events and logs, is [`super::said`]).

use serde_json::{Value, json};

use super::shape::{
    CONTAINER, Fault, Kind, Set, UNSCHEDULABLE, Workload, hash, image, pod_name, pull_error, sets,
    template_hash, time, uid,
};

/// The labels the workload selects its pods by.
fn selector(w: &Workload) -> Value {
    json!({"app.kubernetes.io/name": w.name, "app.kubernetes.io/instance": w.owner.2})
}

fn labels(w: &Workload) -> Value {
    let mut out = json!({});
    for (k, v) in w.labels() {
        out[k] = json!(v);
    }
    out
}

/// The Deployment or Job itself.
pub fn workload(w: &Workload, now: i64) -> Value {
    let meta = json!({
        "name": w.name, "namespace": w.namespace, "uid": uid(&[&w.cluster, &w.namespace, &w.name]),
        "generation": 2, "labels": labels(w), "creationTimestamp": time(now - 86_400),
    });
    let template = json!({
        "metadata": {"labels": selector(w)},
        "spec": {"containers": [{"name": CONTAINER, "image": image(w, &w.revision),
                 "resources": {"limits": {"memory": "64Mi"}, "requests": {"cpu": "100m"}}}]},
    });
    let sets = sets(w);
    if w.kind == Kind::Job {
        let failed = w.fault == Fault::BackoffLimit;
        let conditions = if failed {
            json!([{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                    "message": "Job has reached the specified backoff limit",
                    "lastTransitionTime": time(now - 600), "lastProbeTime": time(now - 600)}])
        } else {
            json!([{"type": "Complete", "status": "True", "lastTransitionTime": time(now - 3600),
                    "lastProbeTime": time(now - 3600)}])
        };
        let mut status = json!({"conditions": conditions, "startTime": time(now - 3600)});
        if failed {
            status["failed"] = json!(7);
        } else {
            status["succeeded"] = json!(1);
        }
        return json!({
            "apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": {"backoffLimit": 6, "completions": 1, "parallelism": 1,
                     "selector": {"matchLabels": selector(w)}, "template": template},
            "status": status,
        });
    }
    let total: usize = sets.iter().map(|s| s.pods).sum();
    let ready: usize = sets
        .iter()
        .filter(|s| s.fault == Fault::Healthy)
        .map(|s| s.pods)
        .sum();
    let updated = sets.last().map_or(0, |s| s.pods);
    let new_rs = sets.last().map(|s| s.owner.clone()).unwrap_or_default();
    let mut conditions = vec![if ready > 0 {
        json!({"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
               "message": "Deployment has minimum availability.", "lastUpdateTime": time(now - 86_000),
               "lastTransitionTime": time(now - 86_000)})
    } else {
        json!({"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
               "message": "Deployment does not have minimum availability.",
               "lastUpdateTime": time(now - 900), "lastTransitionTime": time(now - 900)})
    }];
    conditions.push(if w.failing() {
        json!({"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
               "message": format!("ReplicaSet \"{new_rs}\" has timed out progressing."),
               "lastUpdateTime": time(now - 300), "lastTransitionTime": time(now - 300)})
    } else {
        json!({"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
               "message": format!("ReplicaSet \"{new_rs}\" has successfully progressed."),
               "lastUpdateTime": time(now - 86_000), "lastTransitionTime": time(now - 86_400)})
    });
    let desired = if w.fault == Fault::Hostile { total } else { 2 };
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
        "spec": {"replicas": desired, "progressDeadlineSeconds": 600,
                 "selector": {"matchLabels": selector(w)}, "template": template},
        "status": {"observedGeneration": 2, "replicas": total, "updatedReplicas": updated,
                   "readyReplicas": ready, "availableReplicas": ready,
                   "unavailableReplicas": total - ready, "conditions": conditions},
    })
}

/// The Deployment's ReplicaSets, the newest last.
pub fn replica_sets(w: &Workload, now: i64) -> Vec<Value> {
    if w.kind != Kind::Deployment {
        return Vec::new();
    }
    let sets = sets(w);
    let count = sets.len();
    sets.iter()
        .enumerate()
        .map(|(i, s)| {
            let hash = template_hash(w, &s.revision);
            let mut labels = selector(w);
            labels["pod-template-hash"] = json!(hash);
            let ready = if s.fault == Fault::Healthy { s.pods } else { 0 };
            json!({
                "apiVersion": "apps/v1", "kind": "ReplicaSet",
                "metadata": {"name": s.owner, "namespace": w.namespace, "labels": labels,
                             "uid": uid(&[&w.cluster, &s.owner]),
                             "annotations": {"deployment.kubernetes.io/revision": (i + 1 + 2 - count).to_string()},
                             "creationTimestamp": time(now - 3600 * (count - i) as i64),
                             "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": w.name,
                                                  "controller": true}]},
                "spec": {"replicas": s.pods, "selector": {"matchLabels": labels}},
                "status": {"replicas": s.pods, "readyReplicas": ready, "availableReplicas": ready},
            })
        })
        .collect()
}

/// Every pod of the workload, in name order as the API server lists them.
pub fn pods(w: &Workload, now: i64) -> Vec<Value> {
    let mut out: Vec<Value> = sets(w)
        .iter()
        .flat_map(|s| (0..s.pods).map(move |i| pod(w, s, i, now)))
        .collect();
    out.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    out
}

fn pod(w: &Workload, s: &Set, i: usize, now: i64) -> Value {
    let name = pod_name(w, s, i);
    let image = image(w, &s.revision);
    let mut labels = selector(w);
    let owner_ref = match w.kind {
        Kind::Deployment => {
            labels["pod-template-hash"] = json!(template_hash(w, &s.revision));
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": s.owner, "controller": true})
        }
        Kind::Job => {
            labels["job-name"] = json!(w.name);
            labels["batch.kubernetes.io/job-name"] = json!(w.name);
            json!({"apiVersion": "batch/v1", "kind": "Job", "name": w.name, "controller": true})
        }
    };
    let node = format!("node-{}", hash(&[&w.cluster, &name]) % 3 + 1);
    let started = time(now - 3600);
    let cond = |kind: &str, status: &str| json!({"type": kind, "status": status, "lastTransitionTime": started});
    let not_ready = |reason: &str| {
        vec![
            cond("PodScheduled", "True"),
            cond("Initialized", "True"),
            json!({"type": "Ready", "status": "False", "reason": reason, "lastTransitionTime": started,
                   "message": format!("containers with unready status: [{CONTAINER}]")}),
            json!({"type": "ContainersReady", "status": "False", "reason": reason,
                   "lastTransitionTime": started,
                   "message": format!("containers with unready status: [{CONTAINER}]")}),
        ]
    };
    let container = |state: Value, ready: bool, restarts: u32, last: Value| {
        json!({"name": CONTAINER, "image": image, "ready": ready, "restartCount": restarts,
               "started": ready, "state": state, "lastState": last,
               "imageID": if state.get("waiting").is_some() && restarts == 0 { String::new() }
                          else { format!("{image}@sha256:{:016x}", hash(&[&image])) }})
    };
    let uid = uid(&[&w.cluster, &name]);
    let terminated = |reason: &str, code: i32| {
        json!({"terminated": {"reason": reason, "exitCode": code, "startedAt": time(now - 95),
                              "finishedAt": time(now - 93), "containerID": format!("containerd://{:016x}", hash(&[&uid]))}})
    };
    let (phase, conditions, statuses) = match s.fault {
        Fault::Healthy => (
            "Running",
            vec![
                cond("PodScheduled", "True"),
                cond("Initialized", "True"),
                cond("Ready", "True"),
                cond("ContainersReady", "True"),
            ],
            vec![container(
                json!({"running": {"startedAt": started}}),
                true,
                0,
                json!({}),
            )],
        ),
        Fault::ImageNotFound | Fault::RegistryDenied => (
            "Pending",
            not_ready("ContainersNotReady"),
            vec![container(
                json!({"waiting": {"reason": "ImagePullBackOff",
                                   "message": format!("Back-off pulling image \"{image}\": ErrImagePull: {}", pull_error(s.fault, &image))}}),
                false,
                0,
                json!({}),
            )],
        ),
        Fault::CrashLoop | Fault::OomKilled | Fault::Hostile => {
            let (reason, code) = if s.fault == Fault::OomKilled {
                ("OOMKilled", 137)
            } else {
                ("Error", 1)
            };
            (
                "Running",
                not_ready("ContainersNotReady"),
                vec![container(
                    json!({"waiting": {"reason": "CrashLoopBackOff",
                                       "message": format!("back-off 5m0s restarting failed container={CONTAINER} pod={name}_{}({uid})", w.namespace)}}),
                    false,
                    14,
                    terminated(reason, code),
                )],
            )
        }
        Fault::Unschedulable => (
            "Pending",
            vec![
                json!({"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                       "message": UNSCHEDULABLE, "lastTransitionTime": started}),
            ],
            Vec::new(),
        ),
        Fault::ReadinessProbe => (
            "Running",
            not_ready("ContainersNotReady"),
            vec![container(
                json!({"running": {"startedAt": started}}),
                false,
                0,
                json!({}),
            )],
        ),
        Fault::BackoffLimit => (
            "Failed",
            not_ready("PodFailed"),
            vec![container(terminated("Error", 1), false, 0, json!({}))],
        ),
    };
    let mut pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": w.namespace, "uid": uid, "labels": labels,
                     "creationTimestamp": started, "ownerReferences": [owner_ref]},
        "spec": {"containers": [{"name": CONTAINER, "image": image}], "restartPolicy":
                 if w.kind == Kind::Job { "Never" } else { "Always" }},
        "status": {"phase": phase, "conditions": conditions, "containerStatuses": statuses,
                   "startTime": started, "podIP": format!("10.244.{}.{}", hash(&[&name]) % 250, i % 250 + 2)},
    });
    if s.fault != Fault::Unschedulable {
        pod["spec"]["nodeName"] = json!(node);
    } else if let Some(status) = pod["status"].as_object_mut() {
        status.remove("containerStatuses");
        status.remove("podIP");
    }
    pod
}
