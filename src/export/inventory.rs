//! `fluxfleet inventory`: the clusters of the fleet and where each comes from.

use std::io::{self, Write};
use std::sync::Arc;

use super::outcome::{Ended, ReadFailed};
use crate::bus::reader::Bus;
use crate::headless::Edge;
use crate::headless::Output;
use crate::headless::opening::open;
use crate::headless::table::Table;
use crate::headless::writing;
use crate::inventory::Inventory;
use crate::session::open::Fleet;
use crate::session::resolve::Sources;

/// `fluxfleet inventory`: the fleet as resolved (only management clusters are contacted), or
/// the bus's clusters with their collectors (no cluster is contacted).
pub async fn inventory(
    sources: Sources,
    output: Output,
    edge: Arc<dyn Edge>,
) -> Result<Ended, ReadFailed> {
    let opened = open(&sources, edge.as_ref()).await?;
    let mut out = io::BufWriter::new(io::stdout().lock());
    let written = match &opened.fleet {
        Fleet::Kubeconfigs { inventory, .. } => kubeconfigs(inventory, output, &mut out),
        Fleet::Bus(bus) => collected(bus, output, &mut out),
    };
    written.and_then(|()| out.flush())?;
    Ok(Ended::written(
        opened.clean && !opened.fleet.is_empty(),
        false,
    ))
}

fn kubeconfigs(inventory: &Inventory, output: Output, out: &mut dyn Write) -> io::Result<()> {
    match output {
        Output::Table => {
            let mut t = Table::new(vec!["CLUSTER", "WORKSPACE", "SERVER", "LABELS", "SOURCE"]);
            for c in &inventory.clusters {
                t.row(vec![
                    c.name.clone(),
                    c.workspace.clone(),
                    c.server.clone(),
                    labels(&c.labels),
                    c.source.display().to_string(),
                ]);
            }
            t.write(out)
        }
        Output::Json => writing::write_json(out, inventory),
        Output::Ndjson => inventory
            .clusters
            .iter()
            .try_for_each(|c| writing::write_line(out, c)),
    }
}

/// One cluster of the bus, as `inventory --nats` prints it.
#[derive(serde::Serialize)]
struct Collected<'a> {
    cluster: &'a str,
    workspace: &'a str,
    server: &'a str,
    labels: &'a std::collections::BTreeMap<String, String>,
    /// The collector that publishes it.
    collector: &'a str,
}

fn collected(bus: &Bus, output: Output, out: &mut dyn Write) -> io::Result<()> {
    let clusters: Vec<Collected> = bus
        .states()
        .map(|s| Collected {
            cluster: &s.name,
            workspace: &s.workspace,
            server: &s.server,
            labels: &s.labels,
            collector: &s.collector,
        })
        .collect();
    match output {
        Output::Table => {
            let mut t = Table::new(vec![
                "CLUSTER",
                "WORKSPACE",
                "SERVER",
                "LABELS",
                "COLLECTOR",
            ]);
            for c in &clusters {
                t.row(vec![
                    c.cluster.to_string(),
                    c.workspace.to_string(),
                    c.server.to_string(),
                    labels(c.labels),
                    c.collector.to_string(),
                ]);
            }
            t.write(out)
        }
        Output::Json => writing::write_json(
            out,
            &serde_json::json!({ "bucket": bus.bucket(), "clusters": clusters }),
        ),
        Output::Ndjson => clusters
            .iter()
            .try_for_each(|c| writing::write_line(out, c)),
    }
}

fn labels(labels: &std::collections::BTreeMap<String, String>) -> String {
    if labels.is_empty() {
        return "-".into();
    }
    let pairs: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.join(",")
}
