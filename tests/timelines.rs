//! Timelines recorded from the real controllers (`tests/fixtures/real-flux/timelines/`: every
//! Flux object of a scenario as a watch delivered it, with the time it was seen, what was done
//! to them, and at marks what a person reading Flux's semantics says is true), replayed through
//! the index, the graph, the suspect, `get --root-causes` and `drift`: at each mark, fluxfleet's
//! verdicts are the expected ones. What was recorded, on which versions, and what changed for
//! it: docs/real-flux.md, "Timelines".

use std::collections::BTreeSet;
use std::path::PathBuf;

use fluxfleet::export::Filter;
use fluxfleet::fleet::graph::holds_back;
use fluxfleet::fleet::index::{Change, Event};
use fluxfleet::fleet::{
    ClusterEntry, ClusterInfo, ClusterKey, FluxKind, FluxSummary, Health, Index, ObjectKey, Ready,
};
use fluxfleet::headless::Output;
use jiff::{SignedDuration, Timestamp};
use serde::Deserialize;
use serde_json::Value;

/// The suspect window fluxfleet's default configuration gives.
pub(crate) const WINDOW: SignedDuration = SignedDuration::from_mins(10);
/// How far fluxfleet's "since" may be from the expected time: the controllers write seconds,
/// the recorder milliseconds, and a watch delivers a change a little after it was written.
const SLACK: SignedDuration = SignedDuration::from_secs(3);
const CLUSTER: &str = "real";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Timeline {
    scenario: String,
    title: String,
    recorded: String,
    versions: std::collections::BTreeMap<String, String>,
    settings: String,
    steps: Vec<Step>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    at: Timestamp,
    #[serde(default)]
    did: Option<String>,
    #[serde(default)]
    seen: Option<Seen>,
    #[serde(default)]
    object: Option<Value>,
    #[serde(default)]
    event: Option<Value>,
    #[serde(default)]
    mark: Option<String>,
    #[serde(default)]
    expect: Vec<Expect>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
enum Seen {
    #[serde(rename = "ADDED")]
    Added,
    #[serde(rename = "MODIFIED")]
    Modified,
    #[serde(rename = "DELETED")]
    Deleted,
}

/// What is true of one object at a mark, as the recorder's reader of Flux said it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    /// `Kind/namespace/name`.
    object: String,
    ready: Option<String>,
    suspended: bool,
    root_cause: bool,
    #[serde(default)]
    held_back_by: Vec<String>,
    /// none | spec (generation N) | source-revision REV | values | controller-away
    #[serde(default)]
    cause: Option<String>,
    #[serde(default)]
    failing_since: Option<Timestamp>,
    /// ok | retrying | not-reconciled | suspended
    #[serde(default)]
    reconciles: Option<String>,
    #[serde(default)]
    stalled_message: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    note: Option<String>,
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-flux/timelines")
}

fn timelines() -> Vec<Timeline> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    found.sort();
    found
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            let t: Timeline =
                serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(
                Some(t.scenario.as_str()),
                path.file_stem().and_then(|s| s.to_str()),
                "a timeline is named for its scenario"
            );
            t
        })
        .collect()
}

fn key_of(text: &str) -> ObjectKey {
    let mut parts = text.splitn(3, '/');
    let (kind, namespace, name) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    let kind = FluxKind::from_kind(kind).unwrap_or_else(|| panic!("{text}: no Flux kind"));
    ObjectKey::new(kind, namespace, name)
}

fn named(k: &ObjectKey) -> String {
    format!("{}/{}/{}", k.kind.as_str(), k.namespace, k.name)
}

/// One timeline's objects, applied to an index as the engine applies what a watch brings.
struct Replay {
    index: Index,
    /// What the replay saw of each object, beside the index.
    seen: std::collections::HashMap<ObjectKey, Watched>,
}

/// When an object was last seen ready, when it last changed, and its interval.
#[derive(Default)]
struct Watched {
    ready: Option<Timestamp>,
    changed: Option<Timestamp>,
    interval: Option<SignedDuration>,
}

impl Replay {
    fn new() -> Replay {
        let mut index = Index::new();
        index.add_cluster(ClusterInfo::new(CLUSTER, "real-flux"));
        Replay {
            index,
            seen: Default::default(),
        }
    }

    fn apply(&mut self, step: &Step) {
        let Some(object) = &step.object else {
            return;
        };
        let summary =
            FluxSummary::from_object(object).unwrap_or_else(|e| panic!("{}: {e}", step.at));
        let seen = self.seen.entry(summary.key.clone()).or_default();
        seen.changed = Some(step.at);
        if summary.health == Health::Ready {
            seen.ready = Some(step.at);
        }
        seen.interval = object["spec"]["interval"]
            .as_str()
            .and_then(fluxfleet::units::parse_go_duration)
            .and_then(|d| SignedDuration::try_from(d).ok());
        let change = match step.seen {
            Some(Seen::Deleted) => Change::Deleted(summary.key),
            _ => Change::Applied(summary),
        };
        self.index.apply(Event {
            cluster: ClusterKey::new(CLUSTER),
            at: step.at,
            change,
        });
    }

    fn cluster(&self) -> &ClusterEntry {
        self.index.cluster_named(CLUSTER).unwrap()
    }

    /// What `get --root-causes -o json` says at `now`: each root cause's key, the objects it
    /// holds back, and its suspect where one is likely (as the table's SUSPECT names it).
    fn root_causes(&self, now: Timestamp) -> Vec<(String, BTreeSet<String>, String)> {
        let mut out = Vec::new();
        fluxfleet::export::roots::write(
            &self.index,
            (&Filter::default(), Output::Json),
            (now, WINDOW),
            &mut out,
        )
        .unwrap();
        let json: Value = serde_json::from_slice(&out).unwrap();
        json["rootCauses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let name = format!(
                    "{}/{}/{}",
                    c["kind"].as_str().unwrap(),
                    c["namespace"].as_str().unwrap(),
                    c["name"].as_str().unwrap()
                );
                let blocks = c["clusters"][0]["blocks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| b.as_str().unwrap().to_string())
                    .collect();
                let suspect = &c["suspect"];
                let cause = match (suspect["how"].as_str(), suspect["revision"].as_str()) {
                    _ if suspect["likely"] != Value::Bool(true) => "none".to_string(),
                    (Some("spec"), Some(generation)) => format!("spec ({generation})"),
                    (Some("values"), _) => "values".to_string(),
                    (Some(_), Some(revision)) => format!("source-revision {revision}"),
                    _ => "none".to_string(),
                };
                (name, blocks, cause)
            })
            .collect()
    }

    /// The objects `drift` names as not reconciled within twice their interval at `now`.
    fn stuck(&self, now: Timestamp) -> BTreeSet<String> {
        let drift = fluxfleet::export::drift::of(&self.index, &Filter::default(), now);
        drift
            .reconciles
            .iter()
            .filter(|r| !r.stuck.is_empty())
            .map(|r| format!("{}/{}/{}", r.kind.as_str(), r.namespace, r.name))
            .collect()
    }
}

/// fluxfleet's verdicts on one object at a mark, against what is expected; the differences.
fn differences(replay: &Replay, now: Timestamp, e: &Expect) -> Vec<String> {
    let key = key_of(&e.object);
    let cluster = replay.cluster();
    let Some(o) = cluster.objects.get(&key) else {
        return vec![format!("{}: not in the index", e.object)];
    };
    let mut said = Vec::new();
    let mut differ = |what: &str, fluxfleet: String, expected: String| {
        if fluxfleet != expected {
            said.push(format!(
                "{}: {what}: fluxfleet says {fluxfleet}, expected {expected}",
                e.object
            ));
        }
    };
    let ready = match o.ready {
        Some(Ready::True) => "True",
        Some(Ready::False) => "False",
        Some(Ready::Unknown) => "Unknown",
        None => "none",
    };
    // No Ready condition at all (never reconciled) is what kstatus calls Unknown.
    let expected = match (e.ready.as_deref(), o.ready) {
        (Some("Unknown"), None) => "none",
        (expected, _) => expected.unwrap_or("none"),
    };
    differ("ready", ready.into(), expected.into());
    differ(
        "suspended",
        o.suspended.to_string(),
        e.suspended.to_string(),
    );

    let roots = replay.root_causes(now);
    let root = roots.iter().find(|(name, ..)| *name == e.object);
    differ(
        "root cause",
        root.is_some().to_string(),
        e.root_cause.to_string(),
    );

    // What it waits on now: what it needs that holds it back, as the controllers decide it.
    let holding: BTreeSet<String> = cluster
        .graph
        .upstream(&key)
        .iter()
        .filter(|u| {
            cluster
                .objects
                .get(u)
                .is_some_and(|u| holds_back(u, key.kind))
        })
        .map(named)
        .collect();
    let expected: BTreeSet<String> = e.held_back_by.iter().cloned().collect();
    differ(
        "held back by",
        format!("{holding:?}"),
        format!("{expected:?}"),
    );

    // The change a root cause began after, as its SUSPECT says it (none for what only waits).
    if let Some(cause) = &e.cause {
        let fluxfleet = root.map_or("none".to_string(), |(.., cause)| cause.clone());
        let expected = match cause.as_str() {
            "controller-away" => "none".to_string(),
            other => other.to_string(),
        };
        differ("cause", fluxfleet, expected);
    }

    // Since when it is not ready: when it stopped being ready, which is at its first failure
    // (the expected time) or before it, while it was progressing towards it — never after it
    // (a retry is no new failure), nor before it was last seen ready.
    let seen = replay.seen.get(&key);
    let since = o.is_not_ready().then_some(o.since).flatten();
    let last_ready = seen.and_then(|s| s.ready);
    match (since, e.failing_since) {
        (Some(a), Some(b)) if a <= b + SLACK && last_ready.is_none_or(|r| a + SLACK >= r) => {}
        (_, None) if e.ready.as_deref() != Some("False") => {}
        (None, None) => {}
        (a, b) => differ(
            "failing since",
            format!("{a:?}"),
            format!("{b:?} (last ready {last_ready:?})"),
        ),
    }

    // How reconciles go is told of Kustomizations and HelmReleases (drift), and of what stalled.
    let told = matches!(key.kind, FluxKind::Kustomization | FluxKind::HelmRelease)
        || o.health == Health::Stalled;
    if let Some(reconciles) = e.reconciles.as_ref().filter(|_| told) {
        // A stalled object is not reconciled again until its spec changes: it says so itself.
        let stuck = replay.stuck(now).contains(&e.object) || o.health == Health::Stalled;
        let fluxfleet = match (o.suspended, stuck) {
            (true, _) => "suspended",
            (false, true) => "not-reconciled",
            (false, false) => "reconciled",
        };
        // "Not reconciled within twice its interval" cannot be said before twice its interval
        // has passed since it last changed: until then, either is true of what can be seen.
        let too_soon = seen
            .and_then(|s| Some(now.duration_since(s.changed?) <= s.interval? * 2))
            .unwrap_or(true);
        let expected = match reconciles.as_str() {
            "ok" | "retrying" => "reconciled",
            "not-reconciled" if too_soon && fluxfleet == "reconciled" => "reconciled",
            other => other,
        };
        differ("reconciles", fluxfleet.into(), expected.into());
    }

    if let Some(stalled) = &e.stalled_message {
        let message = o.message.as_deref().unwrap_or("");
        if !message.starts_with(stalled.as_str()) {
            said.push(format!(
                "{}: stalled message: fluxfleet says {message:?}, expected it to start with \
                 {stalled:?}",
                e.object
            ));
        }
    }
    said
}

/// Every timeline, replayed step by step: at each mark every expected verdict holds.
#[test]
fn the_verdicts_hold_at_every_mark_of_every_recorded_timeline() {
    let all = timelines();
    assert!(!all.is_empty(), "no timelines in {}", dir().display());
    let mut wrong = Vec::new();
    for t in &all {
        assert!(
            !t.title.is_empty() && !t.recorded.is_empty() && !t.settings.is_empty(),
            "{}",
            t.scenario
        );
        assert!(
            t.versions.keys().any(|k| k.ends_with("controller")),
            "{}: which controllers recorded it",
            t.scenario
        );
        let mut replay = Replay::new();
        let mut marks = 0;
        let mut done = "nothing yet";
        for step in &t.steps {
            if let Some(did) = &step.did {
                done = did;
            }
            assert!(
                step.object.is_some() == step.seen.is_some() || step.event.is_some(),
                "{} at {}: an object comes with how it was seen",
                t.scenario,
                step.at
            );
            replay.apply(step);
            if let Some(mark) = &step.mark {
                marks += 1;
                assert!(
                    !step.expect.is_empty(),
                    "{} {mark}: nothing expected",
                    t.scenario
                );
                for e in &step.expect {
                    for d in differences(&replay, step.at, e) {
                        wrong.push(format!("{} @ {mark} (after {done:?}): {d}", t.scenario));
                    }
                }
            }
        }
        assert!(marks > 0, "{}: no marks", t.scenario);
    }
    assert!(
        wrong.is_empty(),
        "{} verdicts differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
