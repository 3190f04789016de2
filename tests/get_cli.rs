//! `fluxfleet get` and `fluxfleet inventory` as scripts run them: the binary against an
//! in-process simulated fleet, checking output, exit codes and the errors on bad input.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::fluxfleet;

use common::truth::seen;
use std::path::Path;
use std::process::Output;

use serde_json::Value;

mod kubeconfigs;
mod output;
mod rollout;
mod root_causes;
mod servers;

async fn run(args: &[&str], dir: &Path) -> Output {
    fluxfleet()
        .args(args)
        .arg("--kubeconfig-dir")
        .arg(dir.join("kubeconfigs"))
        .output()
        .await
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The kinds `get` shows when none is named.
const DEFAULT_KINDS: [&str; 7] = [
    "GitRepository",
    "OCIRepository",
    "HelmRepository",
    "HelmChart",
    "Bucket",
    "Kustomization",
    "HelmRelease",
];

/// An object as a row: cluster, kind, namespace, name, status.
type Row = (String, String, String, String, String);

/// Every object of the default kinds on `clusters`, with the truth's health, sorted.
fn truth_rows<'a>(clusters: impl Iterator<Item = &'a fluxfleet_sim::TruthCluster>) -> Vec<Row> {
    let mut rows: Vec<Row> = clusters
        .flat_map(|c| {
            c.objects
                .iter()
                .filter(|o| DEFAULT_KINDS.contains(&o.kind.as_str()))
                .map(|o| {
                    (
                        c.name.clone(),
                        o.kind.clone(),
                        o.namespace.clone(),
                        o.name.clone(),
                        seen(o.health).key().to_string(),
                    )
                })
        })
        .collect();
    rows.sort();
    rows
}

/// The objects `get -o json` wrote, sorted.
fn shown_rows(doc: &Value) -> Vec<Row> {
    let mut rows: Vec<Row> = doc["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let s = |k: &str| o[k].as_str().unwrap().to_string();
            (
                s("cluster"),
                s("kind"),
                s("namespace"),
                s("name"),
                s("status"),
            )
        })
        .collect();
    rows.sort();
    rows
}
