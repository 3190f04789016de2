//! Same revision, different result, on the simulator's story fleet at 2,000 clusters: `drift`
//! names exactly the copies the simulator made differ — a Kustomization's substitutions on a
//! few prod clusters, a HelmRelease's values on one, a release changed by hand on one — and no
//! others.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::collections::BTreeSet;

use fluxfleet_sim::TruthCluster;

mod command_and_mcp;
mod one_object;
mod story_fleet;

/// (cluster, kind/namespace/name, how it differs) as the simulator means it.
type Copy = (String, String, String);

fn meant(truth: &[TruthCluster], reachable: &BTreeSet<&str>) -> BTreeSet<Copy> {
    let mut out = BTreeSet::new();
    for c in truth.iter().filter(|c| reachable.contains(c.name.as_str())) {
        for o in &c.objects {
            let what = format!("{}/{}/{}", o.kind, o.namespace, o.name);
            let seen = [&o.drift, &o.runs].into_iter().flatten();
            for how in seen {
                out.insert((c.name.clone(), what.clone(), how.clone()));
            }
        }
    }
    out
}

/// The set `found` makes of a `drift -o json` answer (the command's, or the MCP tool's pages
/// put together).
fn found_in(doc: &serde_json::Value) -> BTreeSet<Copy> {
    let (differ, live) = (
        doc["differ"].as_array().unwrap(),
        doc["live"].as_array().unwrap(),
    );
    let mut out = BTreeSet::new();
    for d in differ {
        let what = format!(
            "{}/{}/{}",
            d["kind"].as_str().unwrap(),
            d["namespace"].as_str().unwrap(),
            d["name"].as_str().unwrap()
        );
        let how = match d["kind"].as_str() {
            Some("HelmRelease") => "values",
            _ => "substituted",
        };
        for v in d["variants"].as_array().unwrap() {
            for c in v["clusters"].as_array().unwrap() {
                out.insert((
                    c.as_str().unwrap().to_string(),
                    what.clone(),
                    how.to_string(),
                ));
            }
        }
    }
    for l in live {
        let what = format!(
            "{}/{}/{}",
            l["kind"].as_str().unwrap(),
            l["namespace"].as_str().unwrap(),
            l["name"].as_str().unwrap()
        );
        let how = match l.get("correcting") {
            Some(_) => "corrected",
            None => "live",
        };
        out.insert((l["cluster"].as_str().unwrap().to_string(), what, how.into()));
    }
    for r in doc["reconciles"].as_array().unwrap() {
        let what = format!(
            "{}/{}/{}",
            r["kind"].as_str().unwrap(),
            r["namespace"].as_str().unwrap(),
            r["name"].as_str().unwrap()
        );
        let named = |list: &str, how: &str, out: &mut BTreeSet<Copy>| {
            for c in r[list].as_array().unwrap() {
                let cluster = c.get("cluster").unwrap_or(c).as_str().unwrap();
                out.insert((cluster.to_string(), what.clone(), how.to_string()));
            }
        };
        named("slow", "slow", &mut out);
        named("flapping", "flapping", &mut out);
        named("stuck", "stale", &mut out);
    }
    out
}
