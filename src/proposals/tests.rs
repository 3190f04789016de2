#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use serde_json::{Value, json};

use super::proposal::*;
use super::*;
use crate::actions;
use crate::config::Config;
use crate::fleet::index::{Change, Event};
use crate::fleet::scope::Scope;
use crate::fleet::verbs::{Intent, Verb};
use crate::fleet::{ClusterId, ClusterInfo, ClusterKey, FluxKind, FluxSummary, Index, ObjectKey};
use jiff::Timestamp;
use std::time::Duration;

fn now() -> Timestamp {
    "2026-11-28T12:00:00Z".parse().unwrap()
}

fn ks(name: &str, suspended: bool) -> Value {
    json!({"metadata": {"name": name, "namespace": "flux-system", "generation": 1},
           "spec": {"suspend": suspended,
                    "sourceRef": {"kind": "GitRepository", "name": "flux-system"}},
           "status": {"observedGeneration": 1,
                      "conditions": [{"type": "Ready", "status": "True"}]}})
}

fn apply(index: &mut Index, cluster: &str, object: Value) {
    index.apply(Event {
        cluster: ClusterKey::new(cluster),
        at: now(),
        change: Change::Applied(FluxSummary::of(FluxKind::Kustomization, &object).unwrap()),
    });
}

/// `clusters` each running the Kustomization `apps`.
fn fleet(clusters: &[&str]) -> Index {
    let mut index = Index::new();
    for name in clusters {
        index.add_cluster(ClusterInfo::new(name, "prod"));
        apply(&mut index, name, ks("apps", false));
    }
    index
}

fn intent(verb: Verb) -> Intent {
    Intent {
        verb,
        user: "alice".into(),
        reason: Some("freeze".into()).filter(|_| verb == Verb::Suspend),
        token: "2026-11-28T12:00:00Z".into(),
    }
}

/// Every object of the fleet, planned for `intent` with writes allowed everywhere.
fn plan(index: &Index, intent: &Intent) -> Vec<actions::Target> {
    let config = Config::defaults();
    let rules = actions::Rules {
        writes_refused: None,
        purpose: actions::Purpose::Preview,
        actions: &config.actions,
        permissions: None,
    };
    let objects: Vec<(ClusterId, ObjectKey)> = index
        .entries()
        .flat_map(|(id, c)| c.objects.keys().map(move |k| (id, k.clone())))
        .collect();
    let ask = actions::Ask {
        intent: intent.clone(),
        objects: actions::Objects::Named(objects),
    };
    actions::admit(index, ask, &rules)
        .map(|a| a.targets().to_vec())
        .unwrap_or_default()
}

fn proposal(index: &Index, verb: Verb) -> Proposal {
    let asked = ProposalRequest {
        proposed_by: "mcp:assistant".into(),
        why: Some("apps is flapping".into()),
        selection: ProposalSelection {
            scope: Scope {
                kind: Some("ks".into()),
                ..Scope::default()
            },
            ..ProposalSelection::default()
        },
        expiry: Duration::from_secs(600),
    };
    Proposal::new(&intent(verb), &plan(index, &intent(verb)), asked, now())
}

#[test]
fn a_proposal_keeps_the_exact_patches_and_the_same_fleet_plans_the_same() {
    let index = fleet(&["eu-1", "eu-2"]);
    let p = proposal(&index, Verb::Suspend);
    assert!(is_id(&p.id), "{}", p.id);
    assert_eq!((p.sends, p.refused), (2, 0));
    assert_eq!(p.targets[0].cluster, "eu-1");
    assert!(
        p.targets[0].would.starts_with("patch Kustomization {")
            && p.targets[0].would.contains("\"suspend\":true")
            && p.targets[0].would.contains("alice"),
        "{}",
        p.targets[0].would
    );
    assert_eq!(p.hash.len(), 64);
    assert_eq!(p.status(now()), ProposalStatus::Pending);
    assert_eq!(p.expires, now() + jiff::SignedDuration::from_secs(600));
    assert_eq!(p.status(p.expires), ProposalStatus::Expired);
    // Planned again with the proposal's own intent: nothing changed.
    assert_eq!(p.changes(&plan(&index, &p.intent())), None);
}

#[test]
fn a_fleet_that_changed_since_is_said_target_by_target() {
    let mut index = fleet(&["eu-1", "eu-2"]);
    let p = proposal(&index, Verb::Reconcile);
    // eu-1's copy was suspended since (a reconcile is now refused), eu-3 came into scope.
    apply(&mut index, "eu-1", ks("apps", true));
    index.add_cluster(ClusterInfo::new("eu-3", "prod"));
    apply(&mut index, "eu-3", ks("apps", false));
    let changed = p.changes(&plan(&index, &p.intent())).unwrap();
    assert_eq!(changed.len(), 2, "{changed:?}");
    assert!(
        changed[0].starts_with("prod/eu-1 Kustomization flux-system/apps: would now refused:"),
        "{changed:?}"
    );
    assert_eq!(
        changed[1],
        "prod/eu-3 Kustomization flux-system/apps: newly selected"
    );
    // A target gone.
    let index = fleet(&["eu-2"]);
    let changed = p.changes(&plan(&index, &p.intent())).unwrap();
    assert_eq!(
        changed,
        ["prod/eu-1 Kustomization flux-system/apps: no longer selected"]
    );
    // Another token is another patch, though the targets are the same.
    let index = fleet(&["eu-1", "eu-2"]);
    let mut other = p.intent();
    other.token = "2026-11-28T12:30:00Z".into();
    assert!(p.changes(&plan(&index, &other)).is_some());
}

#[test]
fn a_decision_is_taken_once_and_never_on_an_expired_proposal() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path().join("proposals"));
    let index = fleet(&["eu-1"]);
    let p = proposal(&index, Verb::Suspend);
    store.create(&p).unwrap();
    assert_eq!(store.load(&p.id).unwrap(), p);
    let approved = Decision::Approved {
        by: "bob".into(),
        at: now(),
    };
    let decided = store.decide(&p.id, approved.clone(), now()).unwrap();
    assert_eq!(decided.status(now()), ProposalStatus::Approved);
    let again = store.decide(&p.id, approved.clone(), now()).unwrap_err();
    assert!(
        matches!(
            again,
            StoreError::Decided {
                status: ProposalStatus::Approved,
                ..
            }
        ),
        "{again}"
    );
    // A claim left by another process that decided first also stops a second decision.
    let q = proposal(&index, Verb::Suspend);
    store.create(&q).unwrap();
    std::fs::write(store.dir().join(format!("{}.decided", q.id)), "").unwrap();
    assert!(matches!(
        store.decide(&q.id, approved.clone(), now()).unwrap_err(),
        StoreError::Decided { .. }
    ));
    // Expired: neither approved nor rejected.
    let r = proposal(&index, Verb::Suspend);
    store.create(&r).unwrap();
    let rejected = Decision::Rejected {
        by: "bob".into(),
        at: r.expires,
        reason: "late".into(),
    };
    assert!(matches!(
        store.decide(&r.id, rejected, r.expires).unwrap_err(),
        StoreError::Expired(_)
    ));
    // Outcomes recorded on the approved one.
    store
        .record_outcomes(
            &p.id,
            vec![TargetOutcome {
                workspace: "prod".into(),
                cluster: "eu-1".into(),
                kind: "Kustomization".into(),
                namespace: "flux-system".into(),
                name: "apps".into(),
                outcome: "done".into(),
                message: String::new(),
                handled_at: None,
            }],
        )
        .unwrap();
    assert_eq!(store.load(&p.id).unwrap().outcomes.unwrap().len(), 1);
    let (listed, problems) = store.list().unwrap();
    assert_eq!(listed.len(), 3);
    assert!(problems.is_empty());
}

#[test]
fn an_id_is_never_a_path_and_a_broken_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::at(dir.path().to_path_buf());
    for bad in ["../audit", "p-../../x", "p-", "p-zz", "", "x-12"] {
        assert!(
            matches!(store.load(bad), Err(StoreError::BadId(_))),
            "{bad}"
        );
    }
    assert!(matches!(store.load("p-0a0b"), Err(StoreError::NotFound(_))));
    std::fs::write(dir.path().join("p-0a0b.json"), "{not json").unwrap();
    let broken = store.load("p-0a0b").unwrap_err();
    assert!(
        broken.to_string().contains("p-0a0b.json is not a proposal"),
        "{broken}"
    );
    // A file whose id is not its name is not that proposal.
    let index = fleet(&["eu-1"]);
    let p = proposal(&index, Verb::Suspend);
    std::fs::write(
        dir.path().join("p-0c0d.json"),
        serde_json::to_vec(&p).unwrap(),
    )
    .unwrap();
    assert!(matches!(
        store.load("p-0c0d"),
        Err(StoreError::Misnamed { .. })
    ));
    let (listed, problems) = store.list().unwrap();
    assert!(listed.is_empty());
    assert_eq!(problems.len(), 2);
}
