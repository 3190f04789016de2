//! The same verdict on many clusters, one line: verdicts are equal when their headlines are
//! once pod-name hashes, UIDs, IP addresses, timestamps, durations and counts are normalized
//! away. Clusters not read are counted with why, and so are the reads a line is missing
//! ("log not read on 2: forbidden pods/log").

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::verdict::Verdict;
use super::{Evidence, ReadError, Workload, WorkloadRef};

/// One verdict on one workload, and every cluster it holds on.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Line {
    pub workload: WorkloadRef,
    /// The verdict as the first of its clusters (by name) has it, with its facts (a line whose
    /// clusters could not all read the log: as the first that could).
    pub verdict: Verdict,
    pub headline: String,
    /// What was read of the workload on that first cluster: replicas, conditions, its worst
    /// pods, their Warning events.
    pub facts: Workload,
    /// The cluster the verdict and the facts were read on.
    pub from: String,
    pub clusters: Vec<String>,
    /// Reads this line's clusters are missing: a log, the pods, the events.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_read: Vec<ReadFailure>,
}

/// Clusters, or reads on them, that could not be made — with why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadFailure {
    /// `forbidden pods/log`, `unreachable` …
    pub why: String,
    /// The first error as the server said it.
    pub detail: String,
    pub clusters: Vec<String>,
}

/// A Flux object's evidence over many clusters.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Folded {
    /// Failing verdicts first, most clusters first; healthy workloads last.
    pub lines: Vec<Line>,
    /// Clusters nothing could be read from.
    pub not_read: Vec<ReadFailure>,
    /// Clusters asked, and answered.
    pub clusters: usize,
    pub read: usize,
    /// Requests made, all clusters together.
    pub requests: u64,
}

impl Folded {
    /// The first failing line: what an alert or a summary names.
    pub fn top(&self) -> Option<&Line> {
        self.lines.iter().find(|l| !l.verdict.healthy())
    }
}

/// Folds each cluster's evidence (cluster names in any order).
pub fn fold(evidence: Vec<(String, Result<Evidence, ReadError>)>) -> Folded {
    let mut lines: BTreeMap<(WorkloadRef, String), Line> = BTreeMap::new();
    let mut not_read: BTreeMap<String, ReadFailure> = BTreeMap::new();
    let mut folded = Folded {
        clusters: evidence.len(),
        ..Folded::default()
    };
    let mut evidence = evidence;
    evidence.sort_by(|a, b| a.0.cmp(&b.0));
    for (cluster, read) in evidence {
        let read = match read {
            Ok(read) => read,
            Err(e) => {
                note(&mut not_read, e.word().to_string(), &e, &cluster);
                continue;
            }
        };
        folded.read += 1;
        folded.requests += u64::from(read.requests);
        for unread in &read.unread {
            let why = format!("{} {}", unread.why.word(), unread.resource);
            note(&mut not_read, why, &unread.why, &cluster);
        }
        for workload in &read.workloads {
            let verdict = Verdict::of(workload);
            let headline = verdict.headline();
            let key = (workload.id.clone(), normalized(&headline));
            let line = lines.entry(key).or_insert_with(|| Line {
                workload: workload.id.clone(),
                verdict: verdict.clone(),
                headline: headline.clone(),
                facts: workload.clone(),
                from: cluster.clone(),
                clusters: Vec::new(),
                not_read: Vec::new(),
            });
            line.clusters.push(cluster.clone());
            let mut missing: Vec<(String, &ReadError)> = workload
                .unread
                .iter()
                .map(|u| (format!("{} {}", u.why.word(), u.resource), &u.why))
                .collect();
            if let Some(unread) = verdict.log.as_ref().and_then(|l| l.unread.as_ref()) {
                missing.push((
                    format!("log not read, {} {}", unread.why.word(), unread.resource),
                    &unread.why,
                ));
            }
            for (why, error) in missing {
                match line.not_read.iter_mut().find(|n| n.why == why) {
                    Some(n) => n.clusters.push(cluster.clone()),
                    None => line.not_read.push(ReadFailure {
                        why,
                        detail: error.to_string(),
                        clusters: vec![cluster.clone()],
                    }),
                }
            }
        }
    }
    folded.lines = merge_unlogged(lines.into_values().collect());
    folded.lines.sort_by(|a, b| {
        a.verdict
            .healthy()
            .cmp(&b.verdict.healthy())
            .then_with(|| b.clusters.len().cmp(&a.clusters.len()))
            .then_with(|| a.workload.cmp(&b.workload))
            .then_with(|| a.headline.cmp(&b.headline))
    });
    folded.not_read = not_read.into_values().collect();
    folded.not_read.sort_by(|a, b| {
        b.clusters
            .len()
            .cmp(&a.clusters.len())
            .then(a.why.cmp(&b.why))
    });
    folded
}

/// Clusters whose log could not be read join the one line of the same workload and cause
/// whose log was read, if there is exactly one: what they show is all that line says but its
/// log line, and the line names them as not read. With two or more candidates nothing is
/// guessed.
fn merge_unlogged(mut lines: Vec<Line>) -> Vec<Line> {
    let cause = |l: &Line| (l.workload.clone(), normalized(&l.verdict.cause_line()));
    let mut i = 0;
    while i < lines.len() {
        let unlogged = !lines[i].verdict.has_log()
            && lines[i].verdict.log.is_some()
            && lines[i].headline == lines[i].verdict.cause_line();
        let candidates: Vec<usize> = (0..lines.len())
            .filter(|&j| {
                j != i && lines[j].verdict.has_log() && cause(&lines[j]) == cause(&lines[i])
            })
            .collect();
        if let ([j], true) = (candidates.as_slice(), unlogged) {
            let j = *j;
            let from = lines.remove(i);
            let j = if j > i { j - 1 } else { j };
            let into = &mut lines[j];
            into.clusters.extend(from.clusters);
            into.clusters.sort();
            for n in from.not_read {
                match into.not_read.iter_mut().find(|m| m.why == n.why) {
                    Some(m) => {
                        m.clusters.extend(n.clusters);
                        m.clusters.sort();
                    }
                    None => into.not_read.push(n),
                }
            }
            continue;
        }
        i += 1;
    }
    lines
}

fn note(into: &mut BTreeMap<String, ReadFailure>, why: String, error: &ReadError, cluster: &str) {
    into.entry(why.clone())
        .or_insert_with(|| ReadFailure {
            why,
            detail: error.to_string(),
            clusters: Vec::new(),
        })
        .clusters
        .push(cluster.to_string());
}

#[allow(clippy::expect_used)] // Patterns fixed at compile time, tested below.
static NORMALIZERS: LazyLock<Vec<(Regex, &'static str)>> =
    LazyLock::new(|| {
        [
        // RFC 3339 and log timestamps.
        (
            r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?",
            "<time>",
        ),
        (
            r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            "<uid>",
        ),
        // A pod's name: its ReplicaSet's template hash and its own suffix, in the alphabet
        // Kubernetes generates names with (no vowels, no 0, 1, 3).
        (
            r"-[bcdfghjklmnpqrstvwxz2456789]{6,10}-[bcdfghjklmnpqrstvwxz2456789]{5}([^a-z0-9]|$)",
            "-<pod>${1}",
        ),
        (r"-[bcdfghjklmnpqrstvwxz2456789]{5}([^a-z0-9]|$)", "-<pod>${1}"),
        (r"\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b", "<ip>"),
        (r"\[[0-9a-fA-F:]*:[0-9a-fA-F:]+\](:\d+)?", "<ip>"),
        // Go durations: 5m0s, 1.5s, 300ms.
        (
            r"\b\d+(\.\d+)?(ns|us|µs|ms|s|m|h)(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))*\b",
            "<d>",
        ),
        // Counts standing alone (0/3 nodes, 3 Insufficient cpu, attempt 4).
        (r"(^|[\s(\[,=/])\d+\b", "${1}<n>"),
    ]
    .into_iter()
    .map(|(pattern, to)| (Regex::new(pattern).expect("a valid pattern"), to))
    .collect()
    });

/// `text` with what differs between clusters for the same cause taken out.
pub fn normalized(text: &str) -> String {
    NORMALIZERS
        .iter()
        .fold(text.to_string(), |text, (pattern, to)| {
            pattern.replace_all(&text, *to).into_owned()
        })
}
