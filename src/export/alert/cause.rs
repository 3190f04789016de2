//! What an alert says: the failing root causes of `get --status failing --root-causes`, one
//! alert per object failing for one reason (copies whose messages differ — a cluster's name in
//! it, a timeout — are one cause, told by its widest message), in Alertmanager's labels and
//! annotations. Everything in them came from clusters: bounded, and control characters dropped.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};

use super::state::{Found, Key, Labels};
use crate::export::Filter;
use crate::export::roots::{RootCause, causes};
use crate::fleet::Index;
use crate::units::{count, truncate};

/// The alert's name, as Alertmanager routes and silences by it.
pub const ALERTNAME: &str = "FluxRootCause";
/// Longest label value taken from a cluster, in characters.
const LABEL: usize = 256;
/// Longest annotation, in characters.
const ANNOTATION: usize = 1024;
/// Names listed in an annotation or the workspaces label before "and N more".
const LISTED: usize = 20;

/// The failing root causes of the fleet in `filter`'s scope, as alerts carrying `extra` labels.
pub fn evaluate(
    index: &Index,
    filter: &Filter,
    (now, window): (Timestamp, SignedDuration),
    extra: &Labels,
) -> Vec<Found> {
    let mut by_key: BTreeMap<Key, Vec<RootCause>> = BTreeMap::new();
    for cause in causes(index, filter, (now, window)) {
        let key = Key {
            kind: cause.kind,
            namespace: clean(cause.namespace, LABEL),
            name: clean(cause.name, LABEL),
            reason: clean(cause.reason.unwrap_or(cause.status), LABEL),
        };
        by_key.entry(key).or_default().push(cause);
    }
    by_key
        .into_iter()
        .map(|(key, group)| found(key, &group, extra))
        .collect()
}

/// One alert for the causes sharing `key`, the widest first (`causes` orders them so).
fn found(key: Key, group: &[RootCause], extra: &Labels) -> Found {
    let widest = &group[0];
    let mut clusters: Vec<&str> = Vec::new();
    let mut workspaces = BTreeSet::new();
    let mut held = 0;
    let mut held_names = BTreeSet::new();
    for cause in group {
        for copy in &cause.clusters {
            clusters.push(copy.cluster);
            workspaces.insert(copy.workspace);
        }
        held += cause.blocks.total;
        held_names.extend(cause.blocks.names.iter().map(|n| &**n));
    }
    let since = group.iter().filter_map(|c| c.since).min();
    let suspect = widest.suspect.as_ref();
    let likely = suspect
        .filter(|s| s.likely)
        .map(|s| clean(&s.revision, LABEL));

    let mut labels = extra.clone();
    labels.insert("alertname".into(), ALERTNAME.into());
    labels.insert("kind".into(), key.kind.into());
    labels.insert("namespace".into(), key.namespace.clone());
    labels.insert("name".into(), key.name.clone());
    labels.insert("reason".into(), key.reason.clone());
    labels.insert("workspaces".into(), listed(workspaces.iter().copied(), 400));
    if let Some(revision) = &likely {
        labels.insert("suspect_revision".into(), revision.clone());
    }

    let on = format!(
        "{} in {}",
        count(clusters.len(), "cluster", "clusters"),
        count(workspaces.len(), "workspace", "workspaces")
    );
    let mut message = match &widest.cycle {
        Some(cycle) => format!("dependsOn cycle: {}", cycle.join(" -> ")),
        None => widest.message.unwrap_or("").to_string(),
    };
    if group.len() > 1 {
        let others = group.len() - 1;
        message.push_str(&format!(
            " (and {} more)",
            count(others, "other message", "other messages")
        ));
    }
    let blast = match held {
        0 => format!("{on}; holds nothing else back"),
        n => format!(
            "{on}; holds back {} ({})",
            count(n, "object", "objects"),
            listed(held_names.into_iter(), ANNOTATION / 2)
        ),
    };
    let mut annotations = Labels::new();
    annotations.insert(
        "summary".into(),
        clean(
            &format!(
                "{} {}/{} {} on {on}",
                key.kind, key.namespace, key.name, key.reason
            ),
            ANNOTATION,
        ),
    );
    annotations.insert("message".into(), clean(&message, ANNOTATION));
    annotations.insert("clusters".into(), clusters.len().to_string());
    annotations.insert(
        "cluster_names".into(),
        listed(clusters.iter().copied(), ANNOTATION),
    );
    annotations.insert("blast_radius".into(), clean(&blast, ANNOTATION));
    annotations.insert("status".into(), widest.status.into());
    if let Some(since) = since {
        annotations.insert("since".into(), since.to_string());
    }
    let evidence = match suspect {
        Some(s) => s.evidence.clone(),
        None => "no change before the failure: the cause is outside the GitOps change \
                 (infrastructure, credentials, an upstream registry)"
            .into(),
    };
    annotations.insert("suspect".into(), clean(&evidence, ANNOTATION));

    let line = match &likely {
        Some(revision) => format!("{key} — {on}, suspect {revision}"),
        None => format!("{key} — {on}"),
    };
    Found {
        key,
        labels,
        annotations,
        since,
        line: crate::export::table::safe(&line).into_owned(),
    }
}

/// `text` without control characters, cut to `max` characters.
fn clean(text: &str, max: usize) -> String {
    let kept: String = text.chars().filter(|c| !c.is_control()).collect();
    truncate(&kept, max)
}

/// Names joined by commas, as many as fit in `max` characters (and at most [`LISTED`]), then
/// "and N more".
fn listed<'a>(names: impl Iterator<Item = &'a str>, max: usize) -> String {
    let names: Vec<&str> = names.collect();
    let mut out = String::new();
    for (i, name) in names.iter().enumerate() {
        let name = clean(name, LABEL);
        if i == LISTED || out.len() + name.len() + 1 > max {
            out.push_str(&format!(" and {} more", names.len() - i));
            break;
        }
        if i > 0 {
            out.push(',');
        }
        out.push_str(&name);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_bounded_and_say_how_many_were_left_out() {
        let names: Vec<String> = (0..30).map(|i| format!("cluster-{i:02}")).collect();
        let text = listed(names.iter().map(String::as_str), 1000);
        assert!(text.starts_with("cluster-00,cluster-01,"));
        assert!(text.ends_with("cluster-19 and 10 more"), "{text}");
        let text = listed(names.iter().map(String::as_str), 30);
        assert_eq!(text, "cluster-00,cluster-01 and 28 more");
        assert_eq!(listed(["a", "b"].into_iter(), 30), "a,b");
    }

    #[test]
    fn text_from_clusters_loses_control_characters_and_length() {
        assert_eq!(clean("bad\u{1b}[31m\nname", 100), "bad[31mname");
        assert_eq!(clean(&"x".repeat(2000), 10).chars().count(), 11);
    }
}
