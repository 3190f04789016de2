//! What an alert says: the failing root causes of `get --status failing --root-causes`, one
//! alert per incident (causes whose messages say one endpoint fails one way: `FluxIncident`,
//! labelled by the endpoint and the class, its causes annotations), and one per other object
//! failing for one reason (`FluxRootCause`; copies whose messages differ — a cluster's name in
//! it, a timeout — are one cause, told by its widest message), in Alertmanager's labels and
//! annotations. Everything in them came from clusters: bounded, and control characters dropped.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};

use super::state::{AlertKey, Finding, Labels};
use crate::export::Filter;
use crate::export::roots::{Incident, RootCause, causes, incidents};
use crate::fleet::Index;
use crate::units::{count, truncate};

/// The alert's name, as Alertmanager routes and silences by it.
pub const ALERTNAME: &str = "FluxRootCause";
/// The name of an incident's alert.
pub const INCIDENT_ALERTNAME: &str = "FluxIncident";
/// Longest label value taken from a cluster, in characters.
const LABEL: usize = 256;
/// Longest annotation, in characters.
const ANNOTATION: usize = 1024;
/// Names listed in an annotation or the workspaces label before "and N more".
const LISTED: usize = 20;

/// The failing root causes of the fleet in `filter`'s scope, as alerts carrying `extra` labels:
/// one per incident (causes sharing an endpoint's failure), one per other cause.
pub fn evaluate(
    index: &Index,
    filter: &Filter,
    (now, window): (Timestamp, SignedDuration),
    extra: &Labels,
) -> Vec<Finding> {
    let causes = causes(index, filter, (now, window));
    let incidents = incidents(&causes);
    let mut alone = vec![true; causes.len()];
    let mut out: Vec<Finding> = Vec::new();
    for incident in &incidents {
        let group: Vec<&RootCause> = incident.members.iter().map(|&i| &causes[i]).collect();
        for &i in &incident.members {
            alone[i] = false;
        }
        out.push(of_incident(incident, &group, extra));
    }
    let mut by_key: BTreeMap<Object, Vec<&RootCause>> = BTreeMap::new();
    for (cause, _) in causes.iter().zip(alone).filter(|(_, alone)| *alone) {
        let key = (
            cause.kind,
            clean(cause.namespace, LABEL),
            clean(cause.name, LABEL),
            clean(cause.reason.unwrap_or(cause.status), LABEL),
        );
        by_key.entry(key).or_default().push(cause);
    }
    out.extend(
        by_key
            .into_iter()
            .map(|(key, group)| found(key, &group, extra)),
    );
    out
}

/// What a group of causes hits: its clusters (a cluster once), workspaces, and what it holds
/// back.
struct Reach<'a> {
    clusters: Vec<&'a str>,
    workspaces: BTreeSet<&'a str>,
    held: usize,
    held_names: BTreeSet<&'a str>,
    since: Option<Timestamp>,
}

impl<'a> Reach<'a> {
    fn of(group: &[&'a RootCause]) -> Reach<'a> {
        let mut seen = BTreeSet::new();
        let mut reach = Reach {
            clusters: Vec::new(),
            workspaces: BTreeSet::new(),
            held: 0,
            held_names: BTreeSet::new(),
            since: group.iter().filter_map(|c| c.since).min(),
        };
        for cause in group {
            for copy in &cause.clusters {
                if seen.insert(copy.cluster) {
                    reach.clusters.push(copy.cluster);
                }
                reach.workspaces.insert(copy.workspace);
            }
            reach.held += cause.blocks.total;
            reach
                .held_names
                .extend(cause.blocks.names.iter().map(|n| &**n));
        }
        reach
    }

    /// "N clusters in M workspaces".
    fn on(&self) -> String {
        format!(
            "{} in {}",
            count(self.clusters.len(), "cluster", "clusters"),
            count(self.workspaces.len(), "workspace", "workspaces")
        )
    }

    /// What it holds back, with its names.
    fn blast(&self) -> String {
        match self.held {
            0 => format!("{}; holds nothing else back", self.on()),
            n => format!(
                "{}; holds back {} ({})",
                self.on(),
                count(n, "object", "objects"),
                listed(self.held_names.iter().copied(), ANNOTATION / 2)
            ),
        }
    }

    /// The annotations every alert has: the clusters, the blast radius and since when.
    fn annotate(&self, annotations: &mut Labels) {
        annotations.insert("clusters".into(), self.clusters.len().to_string());
        annotations.insert(
            "cluster_names".into(),
            listed(self.clusters.iter().copied(), ANNOTATION),
        );
        annotations.insert("blast_radius".into(), clean(&self.blast(), ANNOTATION));
        if let Some(since) = self.since {
            annotations.insert("since".into(), since.to_string());
        }
    }
}

/// One alert for an incident. Its labels are the endpoint and the error's class only, so that
/// it stays one alert while it spreads; the causes under it are annotations.
fn of_incident(incident: &Incident, group: &[&RootCause], extra: &Labels) -> Finding {
    let key = AlertKey::Incident {
        endpoint: clean(incident.endpoint, LABEL),
        class: incident.class.as_str(),
    };
    let reach = Reach::of(group);
    let mut labels = extra.clone();
    labels.insert("alertname".into(), INCIDENT_ALERTNAME.into());
    labels.insert("endpoint".into(), clean(incident.endpoint, LABEL));
    labels.insert("class".into(), incident.class.as_str().into());

    let causes: Vec<String> = group
        .iter()
        .map(|c| {
            format!(
                "{} {}/{} {} on {}",
                c.kind,
                c.namespace,
                c.name,
                c.reason.unwrap_or(c.status),
                count(c.clusters.len(), "cluster", "clusters")
            )
        })
        .collect();
    let mut annotations = Labels::new();
    annotations.insert(
        "summary".into(),
        clean(
            &format!(
                "{}: {} on {}",
                incident.summary,
                count(group.len(), "root cause", "root causes"),
                reach.on()
            ),
            ANNOTATION,
        ),
    );
    annotations.insert(
        "message".into(),
        clean(group[0].message.unwrap_or(""), ANNOTATION),
    );
    annotations.insert(
        "root_causes".into(),
        listed(causes.iter().map(String::as_str), ANNOTATION),
    );
    reach.annotate(&mut annotations);
    annotations.insert("status".into(), group[0].status.into());
    Finding {
        line: crate::headless::table::safe(&format!("{key} — {}", reach.on())).into_owned(),
        key,
        labels,
        annotations,
        since: reach.since,
    }
}

/// An object failing for one reason, as labels name it: kind, namespace, name, reason.
type Object = (&'static str, String, String, String);

/// One alert for the causes sharing `key`, the widest first (`causes` orders them so).
fn found((kind, namespace, name, reason): Object, group: &[&RootCause], extra: &Labels) -> Finding {
    let widest = group[0];
    let reach = Reach::of(group);
    let suspect = widest.suspect.as_ref();
    let likely = suspect
        .filter(|s| s.likely && s.how.is_revision())
        .map(|s| clean(&s.revision, LABEL));

    let mut labels = extra.clone();
    labels.insert("alertname".into(), ALERTNAME.into());
    labels.insert("kind".into(), kind.into());
    labels.insert("namespace".into(), namespace.clone());
    labels.insert("name".into(), name.clone());
    labels.insert("reason".into(), reason.clone());
    labels.insert(
        "workspaces".into(),
        listed(reach.workspaces.iter().copied(), 400),
    );
    if let Some(revision) = &likely {
        labels.insert("suspect_revision".into(), revision.clone());
    }

    let on = reach.on();
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
    let mut annotations = Labels::new();
    annotations.insert(
        "summary".into(),
        clean(
            &format!("{kind} {namespace}/{name} {reason} on {on}"),
            ANNOTATION,
        ),
    );
    annotations.insert("message".into(), clean(&message, ANNOTATION));
    reach.annotate(&mut annotations);
    annotations.insert("status".into(), widest.status.into());
    let evidence = match suspect {
        Some(s) => s.evidence.clone(),
        None => "no change before the failure: the cause is outside the GitOps change \
                 (infrastructure, credentials, an upstream registry)"
            .into(),
    };
    annotations.insert("suspect".into(), clean(&evidence, ANNOTATION));

    let key = AlertKey::Cause {
        kind,
        namespace,
        name,
        reason,
    };
    let line = match &likely {
        Some(revision) => format!("{key} — {on}, suspect {revision}"),
        None => format!("{key} — {on}"),
    };
    Finding {
        key,
        labels,
        annotations,
        since: reach.since,
        line: crate::headless::table::safe(&line).into_owned(),
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
