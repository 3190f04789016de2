//! The Flux Operator's report on a cluster: its `FluxReport` and `FluxInstance`, read from a
//! cluster that serves `fluxcd.controlplane.io/v1` and kept as a [`Report`].

use std::time::Duration;

use futures::Stream;
use jiff::Timestamp;
use serde::de::{DeserializeSeed, Deserializer};

use super::discovery::OPERATOR_GROUP;
use crate::fleet::report::{self, Instance, InstanceDoc, Report, ReportDoc, first};
use crate::k8s::wire::api::{self, Http, Trouble};

/// A report or an instance is a few KiB; a server sending more for one is misbehaving.
const LIMIT: usize = 1024 * 1024;

/// The operator names both `flux`, in the namespace it runs in — which is the user's choice, so
/// they are found by name across namespaces.
const NAME_SELECTOR: &str = "fieldSelector=metadata.name%3Dflux&limit=1";

/// The first `FluxReport` of a list, read straight from its bytes, as read at `.0`.
struct FirstReport(Timestamp);

impl<'de> DeserializeSeed<'de> for FirstReport {
    type Value = Option<Result<Report, report::Error>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Ok(first::<ReportDoc, _>(d)?.map(|doc| Report::of(&doc, None, self.0)))
    }
}

/// The first `FluxInstance` of a list, read straight from its bytes.
struct FirstInstance;

impl<'de> DeserializeSeed<'de> for FirstInstance {
    type Value = Option<Instance>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Ok(first::<InstanceDoc, _>(d)?.and_then(|doc| Instance::of(&doc)))
    }
}

/// The first object named `flux` of `plural`, as `seed` reads it; None when the kind is not
/// served (any more).
async fn named_flux<S, T>(http: &Http, plural: &str, seed: S) -> Result<Option<T>, Trouble>
where
    S: for<'de> DeserializeSeed<'de, Value = T>,
{
    let path = format!("/apis/{OPERATOR_GROUP}/v1/{plural}?{NAME_SELECTOR}");
    match api::get_seeded_within(http, &path, LIMIT, seed).await {
        Ok(read) => Ok(Some(read)),
        Err(trouble) if trouble.code() == Some(404) => Ok(None),
        Err(trouble) => Err(trouble),
    }
}

/// Reads the cluster's report, with its instance where there is one and it may be read. None:
/// the cluster has no report.
pub(in crate::k8s) async fn read(http: &Http) -> Result<Option<Report>, Trouble> {
    let read = named_flux(http, "fluxreports", FirstReport(Timestamp::now())).await?;
    let Some(report) = read.flatten() else {
        return Ok(None);
    };
    let mut report = report.map_err(Trouble::garbage)?;
    // Without its instance the report still says everything that counts.
    report.instance = named_flux(http, "fluxinstances", FirstInstance)
        .await
        .ok()
        .flatten()
        .flatten()
        .map(std::sync::Arc::new);
    Ok(Some(report))
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
