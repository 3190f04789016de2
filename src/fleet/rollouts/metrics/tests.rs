//! Scripted transitions, and the deliveries they must give.

use super::*;

fn at(minute: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + 60 * minute).unwrap()
}

fn key() -> ObjectKey {
    ObjectKey::new(FluxKind::Kustomization, "flux-system", "apps")
}

fn change(minute: i64, cluster: &str, what: &str, to: &str) -> RecordedChange {
    let mut c = RecordedChange::of_object(at(minute), cluster, "ws".into(), what, &key());
    c.to = Some(to.into());
    c
}

/// The source's new artifact, on a cluster of any ring.
fn artifact(minute: i64, revision: &str) -> RecordedChange {
    let mut c = RecordedChange::of_object(
        at(minute),
        "canary-1",
        "ws".into(),
        "revision",
        &ObjectKey::new(FluxKind::GitRepository, "flux-system", "fleet"),
    );
    c.to = Some(revision.into());
    c
}

/// canary-1..2 in "canary", prod-1..4 in "prod".
fn ring_of(cluster: &str) -> Option<String> {
    cluster.split('-').next().map(str::to_string)
}

fn run(changes: &[RecordedChange]) -> Vec<RingDelivery> {
    let copies = |ring: &str, _: &ObjectKey| match ring {
        "canary" => Some(2),
        "prod" => Some(4),
        _ => None,
    };
    deliveries(changes, &ring_of, &copies, SignedDuration::from_mins(10))
}

#[test]
fn lead_times_count_from_the_first_sight_to_each_share_of_the_ring() {
    let changes = vec![
        artifact(0, "r1"),
        change(2, "canary-1", "revision", "r1"),
        change(4, "canary-2", "revision", "r1"),
        change(30, "prod-1", "revision", "r1"),
        change(31, "prod-2", "revision", "r1"),
        change(40, "prod-3", "revision", "r1"),
    ];
    let d = run(&changes);
    let canary = d.iter().find(|d| d.ring == "canary").unwrap();
    // 50 % of 2 is the first copy, 90 % and 100 % the second.
    assert_eq!(
        canary.revisions[0].lead_seconds,
        [Some(120), Some(240), Some(240)]
    );
    assert_eq!(canary.lead_seconds, [Some(120), Some(240), Some(240)]);
    let prod = d.iter().find(|d| d.ring == "prod").unwrap();
    // Three of four: 50 % at the second, 90 % and 100 % not yet.
    assert_eq!(prod.revisions[0].lead_seconds, [Some(31 * 60), None, None]);
    assert_eq!(prod.revisions[0].applied, 3);
    assert_eq!(prod.change_failure_rate, Some(0.0));
    assert_eq!(prod.restore_seconds, None);
}

#[test]
fn a_failure_soon_after_a_revision_is_its_and_restored_when_every_copy_is_ready() {
    let changes = vec![
        artifact(0, "r1"),
        change(1, "canary-1", "revision", "r1"),
        change(1, "canary-2", "revision", "r1"),
        artifact(60, "r2"),
        change(61, "canary-1", "revision", "r2"),
        change(62, "canary-2", "revision", "r2"),
        // Both fail within the window after r2.
        change(65, "canary-1", "health", "failed"),
        change(66, "canary-2", "health", "stalled"),
        // One recovers, then the other: restored at 90, 25 minutes after the first failure.
        change(80, "canary-1", "health", "ready"),
        change(90, "canary-2", "health", "ready"),
        // r3 arrives; a failure long after it is not its.
        artifact(120, "r3"),
        change(121, "canary-1", "revision", "r3"),
        change(121, "canary-2", "revision", "r3"),
        change(200, "canary-1", "health", "failed"),
    ];
    let d = run(&changes);
    let canary = d.iter().find(|d| d.ring == "canary").unwrap();
    let by: Vec<(&str, usize, Option<i64>)> = canary
        .revisions
        .iter()
        .map(|r| (r.revision.as_str(), r.failed, r.restored_seconds))
        .collect();
    assert_eq!(
        by,
        [("r1", 0, None), ("r2", 2, Some(25 * 60)), ("r3", 0, None)]
    );
    assert_eq!(canary.change_failure_rate, Some(1.0 / 3.0));
    assert_eq!(canary.restore_seconds, Some(25 * 60));
}

#[test]
fn a_failure_not_yet_restored_has_no_restore_time_and_unknown_clusters_are_left_out() {
    let changes = vec![
        artifact(0, "r1"),
        change(1, "canary-1", "revision", "r1"),
        change(3, "canary-1", "health", "failed"),
        change(3, "elsewhere", "revision", "r1"),
    ];
    let ring_of = |c: &str| c.starts_with("canary").then(|| "canary".to_string());
    let d = deliveries(
        &changes,
        &ring_of,
        &|_, _| None,
        SignedDuration::from_mins(10),
    );
    assert_eq!(d.len(), 1);
    let r = &d[0].revisions[0];
    assert_eq!((r.failed, r.restored_seconds), (1, None));
    assert_eq!(d[0].change_failure_rate, Some(1.0));
    // Without a count of its copies, the ring has those the history shows.
    assert_eq!(d[0].clusters, 1);
}

#[test]
fn times_are_the_clusters_own_where_a_change_carries_one() {
    // Seen a minute after each happened (a collector catching up): the lead times are the
    // clusters' own.
    let late = |mut c: RecordedChange| {
        c.happened = Some(c.at);
        c.at += SignedDuration::from_mins(1);
        c
    };
    let changes: Vec<RecordedChange> = vec![
        late(artifact(0, "r1")),
        late(change(2, "canary-1", "revision", "r1")),
        // This one carries no time of its own: when it was seen counts.
        change(5, "canary-2", "revision", "r1"),
    ];
    let d = run(&changes);
    let canary = d.iter().find(|d| d.ring == "canary").unwrap();
    assert_eq!(
        canary.revisions[0].lead_seconds,
        [Some(120), Some(300), Some(300)]
    );
}

#[test]
fn a_source_seen_late_with_an_earlier_time_still_starts_the_lead_time() {
    // A collector catching up: the copies' applies arrive before the source's artifact, which
    // says it happened first. Streamed in that order, the lead time still counts from it.
    let mut late = artifact(9, "r1");
    late.happened = Some(at(0));
    let changes = vec![
        change(2, "canary-1", "revision", "r1"),
        change(4, "canary-2", "revision", "r1"),
        late,
    ];
    let mut streamed = Deliveries::new(ring_of, SignedDuration::from_mins(10));
    for c in &changes {
        streamed.add(c);
    }
    let d = streamed.finish(&|_, _| Some(2));
    let canary = d.iter().find(|d| d.ring == "canary").unwrap();
    assert_eq!(canary.revisions[0].first_seen, at(0));
    assert_eq!(
        canary.revisions[0].lead_seconds,
        [Some(120), Some(240), Some(240)]
    );
    assert_eq!(run(&changes), d, "held or streamed, the same figures");
}

/// A fleet that promotes by a branch per ring: the commit first seen on the canary ring's
/// branch is the one prod's branch brings later, and prod's lead time counts from then.
#[test]
fn a_commit_reached_by_each_rings_branch_is_led_from_its_first_sight_anywhere() {
    let changes = vec![
        artifact(0, "ring-canary@sha1:659d8880"),
        change(2, "canary-1", "revision", "ring-canary@sha1:659d8880"),
        change(3, "canary-2", "revision", "ring-canary@sha1:659d8880"),
        change(30, "prod-1", "revision", "ring-prod@sha1:659d8880"),
        change(31, "prod-2", "revision", "ring-prod@sha1:659d8880"),
        change(32, "prod-3", "revision", "ring-prod@sha1:659d8880"),
        change(33, "prod-4", "revision", "ring-prod@sha1:659d8880"),
        change(35, "prod-4", "health", "failed"),
    ];
    let d = run(&changes);
    let prod = d.iter().find(|d| d.ring == "prod").unwrap();
    assert_eq!(prod.revisions.len(), 1);
    assert_eq!(
        prod.revisions[0].lead_seconds,
        [Some(31 * 60), Some(33 * 60), Some(33 * 60)]
    );
    assert_eq!(prod.change_failure_rate, Some(1.0));
}
