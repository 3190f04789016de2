//! The Flux Operator's report on a cluster: its `FluxReport` and `FluxInstance`, read from a
//! cluster that serves `fluxcd.controlplane.io/v1` and kept as a [`Report`].

use std::time::Duration;

use futures::Stream;
use jiff::Timestamp;
use serde::Deserialize;
use serde_json::Value;

use super::discovery::OPERATOR_GROUP;
use crate::fleet::report::Report;
use crate::k8s::wire::api::{self, Http, Trouble};

/// A report or an instance is a few KiB; a server sending more for one is misbehaving.
const LIMIT: usize = 1024 * 1024;

/// The operator names both `flux`, in the namespace it runs in — which is the user's choice, so
/// they are found by name across namespaces.
const NAME_SELECTOR: &str = "fieldSelector=metadata.name%3Dflux&limit=1";

#[derive(Deserialize)]
struct List {
    #[serde(default)]
    items: Vec<Value>,
}

/// The first object named `flux` of `plural`; None when there is none, or the kind is not
/// served (any more).
async fn named_flux(http: &Http, plural: &str) -> Result<Option<Value>, Trouble> {
    let path = format!("/apis/{OPERATOR_GROUP}/v1/{plural}?{NAME_SELECTOR}");
    match api::get_json_within::<List>(http, &path, LIMIT).await {
        Ok(list) => Ok(list.items.into_iter().next()),
        Err(trouble) if trouble.code() == Some(404) => Ok(None),
        Err(trouble) => Err(trouble),
    }
}

/// Reads the cluster's report, with its instance where there is one and it may be read. None:
/// the cluster has no report.
pub(in crate::k8s) async fn read(http: &Http) -> Result<Option<Report>, Trouble> {
    let Some(report) = named_flux(http, "fluxreports").await? else {
        return Ok(None);
    };
    // Without its instance the report still says everything that counts.
    let instance = named_flux(http, "fluxinstances").await.ok().flatten();
    Report::read(&report, instance.as_ref(), Timestamp::now())
        .map(Some)
        .map_err(Trouble::garbage)
}

/// The report now and then every `every`, for as long as it is polled.
pub(in crate::k8s) fn every(
    http: std::sync::Arc<Http>,
    every: Duration,
) -> impl Stream<Item = Result<Option<Report>, Trouble>> {
    futures::stream::unfold((http, true), move |(http, first)| async move {
        if !first {
            tokio::time::sleep(every).await;
        }
        // Boxed: a read takes ~1.4 KB of state, and the stream spends its life between reads.
        let read = Box::pin(read(&http)).await;
        Some((read, (http, false)))
    })
}
