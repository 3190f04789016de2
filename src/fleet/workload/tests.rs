use std::collections::HashSet;

use serde_json::{Value, json};

use super::fold::{fold, normalized};
use super::verdict::{Verdict, WorkloadCause};
use super::*;

fn id(kind: Kind, name: &str) -> WorkloadRef {
    WorkloadRef {
        kind,
        namespace: "kube-system".into(),
        name: name.into(),
    }
}

fn pod_json(name: &str, status: Value) -> Value {
    json!({"metadata": {"name": name}, "status": status})
}

fn image_pull(pod: &str, image: &str) -> Value {
    pod_json(
        pod,
        json!({"phase": "Pending", "conditions": [{"type": "Ready", "status": "False"}],
               "containerStatuses": [{"name": "manager", "image": image, "ready": false, "restartCount": 0,
                 "state": {"waiting": {"reason": "ImagePullBackOff",
                   "message": format!("Back-off pulling image \"{image}\": ErrImagePull: rpc error: code = NotFound desc = failed to pull and unpack image \"{image}\": failed to resolve reference \"{image}\": {image}: not found")}}}]}),
    )
}

fn crash(pod: &str, reason: &str, code: i32) -> Value {
    pod_json(
        pod,
        json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}],
               "containerStatuses": [{"name": "manager", "image": "r/x:1", "ready": false, "restartCount": 14,
                 "state": {"waiting": {"reason": "CrashLoopBackOff", "message": format!("back-off 5m0s restarting failed container=manager pod={pod}_ns(4f1c2d3e-1111-4222-8333-123456789abc)")}},
                 "lastState": {"terminated": {"reason": reason, "exitCode": code}}}]}),
    )
}

fn ready(pod: &str) -> Value {
    pod_json(
        pod,
        json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
               "containerStatuses": [{"name": "manager", "image": "r/x:1", "ready": true, "restartCount": 0,
                 "state": {"running": {}}}]}),
    )
}

fn deployment(stuck: bool) -> Value {
    let progressing = if stuck {
        json!({"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
               "message": "ReplicaSet \"x-7d9f8b6c5d\" has timed out progressing."})
    } else {
        json!({"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"})
    };
    json!({"spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x"}}},
           "status": {"replicas": 3, "updatedReplicas": 1, "readyReplicas": 2, "availableReplicas": 2,
                      "conditions": [progressing]}})
}

/// A workload with these pods (worst first as the reader keeps them) and events.
fn workload(kind: Kind, object: Value, pods: Vec<Value>, events: Value) -> Workload {
    let mut w = parse::workload(id(kind, "x"), &object);
    let (pods, total, cut) = parse::pods(&json!({"items": pods}));
    let about: HashSet<String> = pods.iter().map(|p| format!("Pod/{}", p.name)).collect();
    w.events = parse::events(&json!({"items": events}), &about, "x");
    (w.pods, w.pods_total, w.pods_cut) = (pods, total, cut);
    w
}

fn evidence(workloads: Vec<Workload>) -> Result<Evidence, ReadError> {
    Ok(Evidence {
        workloads,
        requests: 4,
        ..Evidence::default()
    })
}

#[test]
fn a_kustomization_names_what_its_health_check_waited_for_first_then_its_inventory() {
    let ks = json!({"status": {
    "conditions": [{"type": "Ready", "status": "False", "message":
        "health check failed after 5m0.03s: timeout waiting for: [Deployment/kube-system/infra-controllers status: 'InProgress', StatefulSet/db/pg status: 'InProgress']"}],
    "inventory": {"entries": [
        {"id": "_kube-system__Namespace", "v": "v1"},
        {"id": "kube-system_infra__Service", "v": "v1"},
        {"id": "kube-system_infra-controllers_apps_Deployment", "v": "v1"},
        {"id": "batch_migrate_batch_Job", "v": "v1"},
        {"id": "x_y_example.com_Deployment", "v": "v1"},
    ]}}});
    let found: Vec<String> = parse::kustomization_workloads(&ks)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        found,
        [
            "Deployment/kube-system/infra-controllers",
            "StatefulSet/db/pg",
            "Job/batch/migrate"
        ]
    );
    assert_eq!(parse::named_in("no workloads here: Secret/a/b"), []);
    assert_eq!(parse::named_in("XDeployment/a/b"), []);
}

#[test]
fn selectors_become_label_selector_queries() {
    let w = json!({"spec": {"selector": {"matchLabels": {"app": "x"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]},
                             {"key": "canary", "operator": "DoesNotExist"}]}}});
    assert_eq!(
        parse::selector(&w).as_deref(),
        Some("app=x,tier in (a,b),!canary")
    );
    assert_eq!(parse::selector(&json!({"spec": {}})), None);
    assert_eq!(parse::selector(&json!({"spec": {"selector": {}}})), None);
}

#[test]
fn pods_are_kept_worst_first_and_at_most_twenty_of_all_the_selector_matched() {
    let mut items: Vec<Value> = (0..30).map(|i| ready(&format!("p{i:02}"))).collect();
    items.push(image_pull("pull", "r/x:2"));
    items.push(crash("crash", "Error", 1));
    let list = json!({"items": items, "metadata": {"continue": "t", "remainingItemCount": 68}});
    let (pods, total, cut) = parse::pods(&list);
    assert_eq!(pods.len(), limits::PODS_KEPT);
    assert_eq!(
        (pods[0].name.as_str(), pods[1].name.as_str()),
        ("crash", "pull")
    );
    assert_eq!((total, cut), (100, true));
}

#[test]
fn each_cause_has_its_verdict_with_the_facts_that_show_it() {
    let image = "registry.example.com/infra:v1.4.2";
    let w = workload(
        Kind::Deployment,
        deployment(true),
        vec![ready("a"), image_pull("b", image)],
        json!([]),
    );
    let v = Verdict::of(&w);
    assert!(v.rollout_stuck);
    assert_eq!(
        v.headline(),
        format!("ImagePullBackOff: {image}: not found (no such tag or digest)")
    );
    assert_eq!(
        v.rollout().as_deref(),
        Some("2/2 ready, 1 updated; rollout stuck (ProgressDeadlineExceeded)")
    );

    let mut w = workload(
        Kind::Deployment,
        deployment(true),
        vec![crash("c", "OOMKilled", 137)],
        json!([]),
    );
    w.pods[0].containers[0].log = Some(parse::log(
        b"start\nwarming cache\nWARN cache at 61Mi of 64Mi\n",
        parse::LogRead::default(),
        true,
    ));
    let v = Verdict::of(&w);
    assert!(matches!(
        v.cause,
        WorkloadCause::Crash {
            exit_code: Some(137),
            ..
        }
    ));
    assert_eq!(
        v.headline(),
        "CrashLoopBackOff (OOMKilled, exit 137): WARN cache at 61Mi of 64Mi"
    );
    assert_eq!(v.cause_line(), "CrashLoopBackOff (OOMKilled, exit 137)");

    let mut w = workload(
        Kind::Deployment,
        deployment(true),
        vec![crash("c", "Error", 1)],
        json!([]),
    );
    w.pods[0].containers[0].log = Some(parse::log(
        b"panic: missing INFRA_TOKEN\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:48 +0x1c5\n",
        parse::LogRead::default(),
        true,
    ));
    assert_eq!(
        Verdict::of(&w).headline(),
        "CrashLoopBackOff (Error, exit 1): panic: missing INFRA_TOKEN"
    );

    let pending = pod_json(
        "p",
        json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "message": "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."}]}),
    );
    let w = workload(Kind::Deployment, deployment(true), vec![pending], json!([]));
    assert_eq!(
        Verdict::of(&w).headline(),
        "Pending, unschedulable: 0/3 nodes are available: 3 Insufficient cpu."
    );
    // kube-scheduler v1.35 adds what dynamic resource allocation found before preemption.
    assert_eq!(
        super::verdict::scheduler_words(
            "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
        ),
        "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector."
    );

    let unready = pod_json(
        "r",
        json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}],
               "containerStatuses": [{"name": "manager", "ready": false, "state": {"running": {}}}]}),
    );
    let events = json!([
        {"type": "Warning", "reason": "Unhealthy", "message": "Readiness probe failed: HTTP probe failed with statuscode: 503",
         "involvedObject": {"kind": "Pod", "name": "r"}, "lastTimestamp": "2026-11-27T10:00:00Z"},
        {"type": "Warning", "reason": "Unhealthy", "message": "about another pod",
         "involvedObject": {"kind": "Pod", "name": "other"}, "lastTimestamp": "2026-11-27T11:00:00Z"},
        {"type": "Normal", "reason": "Pulled", "message": "pulled", "involvedObject": {"kind": "Pod", "name": "r"}},
    ]);
    let w = workload(Kind::Deployment, deployment(false), vec![unready], events);
    assert_eq!(w.events.len(), 1, "only the pod's Warning events");
    assert_eq!(
        Verdict::of(&w).headline(),
        "readiness probe failing: Readiness probe failed: HTTP probe failed with statuscode: 503"
    );

    let job = json!({"spec": {"selector": {"matchLabels": {"job-name": "x"}}}, "status": {"conditions": [
        {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}]}});
    let failed = pod_json(
        "j",
        json!({"phase": "Failed", "containerStatuses": [{"name": "m", "state": {"terminated": {"reason": "Error", "exitCode": 2}}}]}),
    );
    let v = Verdict::of(&workload(Kind::Job, job, vec![failed], json!([])));
    assert!(matches!(
        v.cause,
        WorkloadCause::JobFailed {
            exit_code: Some(2),
            ..
        }
    ));
    assert_eq!(
        v.headline(),
        "Job failed, BackoffLimitExceeded: Job has reached the specified backoff limit"
    );

    let w = workload(
        Kind::Deployment,
        deployment(true),
        vec![ready("a")],
        json!([]),
    );
    assert!(matches!(
        Verdict::of(&w).cause,
        WorkloadCause::RolloutStuck { .. }
    ));
    let mut healthy = deployment(false);
    healthy["status"]["updatedReplicas"] = json!(2);
    let w = workload(
        Kind::Deployment,
        healthy,
        vec![ready("a"), ready("b")],
        json!([]),
    );
    assert!(Verdict::of(&w).healthy());
    assert_eq!(
        Verdict::of(&parse::missing(id(Kind::Job, "gone"))).headline(),
        "not on the cluster"
    );
}

#[test]
fn normalizing_takes_out_what_differs_between_clusters_and_keeps_what_names_the_cause() {
    assert_eq!(
        normalized(
            "back-off 5m0s restarting failed container=manager pod=infra-7d9f8b6c5d-x2x7q_kube-system(4f1c2d3e-1111-4222-8333-123456789abc)"
        ),
        "back-off <d> restarting failed container=manager pod=infra-<pod>_kube-system(<uid>)"
    );
    assert_eq!(
        normalized(
            "2026-11-27T10:30:08Z WARN dial tcp 10.96.14.2:5432: connection refused after 1.5s, attempt 4"
        ),
        "<time> WARN dial tcp <ip>: connection refused after <d>, attempt <n>"
    );
    assert_eq!(
        normalized("0/3 nodes are available: 3 Insufficient cpu."),
        "<n>/<n> nodes are available: <n> Insufficient cpu."
    );
    // Image tags and names stay: two tags are two causes.
    let image = "registry.example.com/infra-controllers:v1.4.2 sha-2830676 missing-token";
    assert_eq!(normalized(image), image);
}

#[test]
fn equal_verdicts_fold_across_clusters_and_what_was_not_read_is_counted_with_why() {
    let image = |tag: &str| format!("registry.example.com/infra:{tag}");
    let pulling = |pod: &str, tag: &str| {
        workload(
            Kind::Deployment,
            deployment(true),
            vec![image_pull(pod, &image(tag))],
            json!([]),
        )
    };
    let oom = |pod: &str, log: Option<&[u8]>| {
        let mut w = workload(
            Kind::Deployment,
            deployment(true),
            vec![crash(pod, "OOMKilled", 137)],
            json!([]),
        );
        w.pods[0].containers[0].log = Some(match log {
            Some(bytes) => parse::log(bytes, parse::LogRead::default(), true),
            None => Log {
                previous: true,
                lines: Vec::new(),
                cut: false,
                unread: Some(ResourceUnread {
                    resource: "pods/log".into(),
                    why: ReadError::Forbidden("pods \"x\" is forbidden".into()),
                }),
                empty: None,
            },
        });
        w
    };
    let folded = fold(vec![
        (
            "c".into(),
            evidence(vec![pulling("infra-7d9f8b6c5d-x2x7q", "v2")]),
        ),
        (
            "a".into(),
            evidence(vec![pulling("infra-7d9f8b6c5d-bq4zt", "v2")]),
        ),
        (
            "b".into(),
            evidence(vec![pulling("infra-7d9f8b6c5d-bq4zt", "v3")]),
        ),
        (
            "d".into(),
            evidence(vec![oom(
                "infra-5c8d7b9f6c-k2m4p",
                Some(b"2026-11-27T10:00:00Z WARN cache at 61Mi\n"),
            )]),
        ),
        (
            "e".into(),
            evidence(vec![oom(
                "infra-5c8d7b9f6c-j7n8r",
                Some(b"2026-11-27T11:11:11Z WARN cache at 61Mi\n"),
            )]),
        ),
        (
            "f".into(),
            evidence(vec![oom("infra-5c8d7b9f6c-h5l6s", None)]),
        ),
        (
            "g".into(),
            Err(ReadError::Unreachable("connection refused".into())),
        ),
        (
            "h".into(),
            Err(ReadError::Unreachable("connection reset".into())),
        ),
    ]);
    let lines: Vec<(usize, &str)> = folded
        .lines
        .iter()
        .map(|l| (l.clusters.len(), l.headline.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            (
                3,
                "CrashLoopBackOff (OOMKilled, exit 137): 2026-11-27T10:00:00Z WARN cache at 61Mi"
            ),
            (
                2,
                "ImagePullBackOff: registry.example.com/infra:v2: not found (no such tag or digest)"
            ),
            (
                1,
                "ImagePullBackOff: registry.example.com/infra:v3: not found (no such tag or digest)"
            ),
        ]
    );
    assert_eq!(folded.lines[0].clusters, ["d", "e", "f"]);
    assert_eq!(folded.lines[0].not_read.len(), 1);
    assert_eq!(
        folded.lines[0].not_read[0].why,
        "log not read, forbidden pods/log"
    );
    assert_eq!(folded.lines[0].not_read[0].clusters, ["f"]);
    assert_eq!(folded.lines[1].clusters, ["a", "c"]);
    assert_eq!((folded.clusters, folded.read, folded.requests), (8, 6, 24));
    assert_eq!(folded.not_read.len(), 1);
    assert_eq!(folded.not_read[0].why, "unreachable");
    assert_eq!(folded.not_read[0].clusters, ["g", "h"]);
    assert_eq!(folded.top().map(|l| l.clusters.len()), Some(3));
}

#[test]
fn text_from_clusters_is_shown_with_its_controls_made_visible() {
    assert_eq!(
        visible("a\u{1b}]52;c;eA==\u{7}b\u{9b}c\u{202e}d\te\nf"),
        "a\\u{1b}]52;c;eA==\\u{7}b\\u{9b}c\\u{202e}d\te\nf"
    );
    assert!(matches!(visible("plain"), std::borrow::Cow::Borrowed(_)));
}

#[test]
fn an_empty_log_says_why_as_the_server_said() {
    // A real kube-apiserver answers 204 No Content for the log of a pod on no node.
    let none = parse::log(
        b"",
        parse::LogRead {
            cut: false,
            no_content: true,
        },
        false,
    );
    assert_eq!(none.empty, Some(EmptyLog::NoLog));
    assert!(none.empty.unwrap().to_string().contains("no log"));
    let quiet = parse::log(b"", parse::LogRead::default(), true);
    assert_eq!(quiet.empty, Some(EmptyLog::NothingWritten));
    assert_eq!(
        parse::log(b"one\n", parse::LogRead::default(), true).empty,
        None
    );
}

#[test]
fn a_log_keeps_its_last_lines_each_bounded_and_reads_bytes_as_text_leniently() {
    let mut text = Vec::new();
    for i in 0..80 {
        text.extend_from_slice(format!("line {i}\n").as_bytes());
    }
    text.extend_from_slice(&[0xff, 0xfe, b'\n']);
    text.extend_from_slice("x".repeat(10_000).as_bytes());
    let log = parse::log(
        &text,
        parse::LogRead {
            cut: true,
            no_content: false,
        },
        false,
    );
    assert_eq!(log.lines.len(), limits::LOG_LINES);
    assert_eq!(log.lines[0], "line 32");
    assert!(
        log.lines
            .last()
            .is_some_and(|l| l.chars().count() == limits::MESSAGE)
    );
    assert!(log.cut);
}
