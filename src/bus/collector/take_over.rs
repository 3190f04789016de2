//! Taking clusters over: what the bus holds for them, as their last owner left them, read so
//! that the new owner publishes only what changes.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{Owned, Published};
use crate::bus::wire::{self, ClusterState};
use crate::bus::{BusError, Stores, keys, last_values};
use crate::fleet::Counted;

/// What the bus holds for `clusters` of a fleet of `fleet`, as their last owner left them: read
/// cluster by cluster for a few; for many (a collector starting, or taking a dead one's share:
/// one consumer per cluster would make a handover of a thousand clusters take tens of seconds),
/// the bucket's keys listed and the clusters' values read by key, many at once.
pub(super) async fn take_over(
    stores: &Stores,
    clusters: &BTreeSet<String>,
    fleet: usize,
) -> Result<BTreeMap<String, Owned>, BusError> {
    let mut out: BTreeMap<String, Owned> = clusters
        .iter()
        .map(|name| {
            let owned = Owned {
                state: None,
                objects: HashMap::new(),
                summary: None,
                report: None,
                counted: Counted::Objects,
                held: None,
                not_ready: BTreeMap::new(),
            };
            (name.clone(), owned)
        })
        .collect();
    let values = if clusters.len() <= 8 {
        let mut values = Vec::new();
        for name in clusters {
            values.extend(last_values(stores, &keys::objects_of(name)).await?);
            values.extend(last_values(stores, &keys::cluster(name)).await?);
        }
        values
    } else {
        // The bucket's keys listed (names only), and the values of these clusters' keys read
        // by themselves, many at once: reading every value of a 20,000-cluster bucket to take
        // 1,700 clusters took 5-16 s with three collectors at it, this 9-11 s. Most of the
        // bucket wanted (a collector starting): one pass over it is quicker.
        let mut wanted: Vec<String> = clusters.iter().map(|name| keys::cluster(name)).collect();
        let listed = crate::bus::listed_keys(stores, "o.>").await?;
        // The bucket: the objects, and each cluster's state and summary. (Counting the objects
        // alone, a summarized fleet — none on the bus — had every takeover read it all: at
        // 100,000 clusters, 200,000 values to take 8,000 clusters over.)
        let total = listed.len() + 2 * fleet;
        for key in listed {
            if let Some(keys::StateKey::Object(cluster, _)) = keys::parse(&key)
                && clusters.contains(&cluster)
            {
                wanted.push(key);
            }
        }
        if wanted.len() * 4 > total {
            last_values(stores, ">").await?
        } else {
            crate::bus::values_of(stores, wanted).await?
        }
    };
    for (key, value) in values {
        match keys::parse(&key) {
            Some(keys::StateKey::Object(cluster, _)) => {
                let (Some(owned), Ok(summary)) = (out.get_mut(&cluster), wire::object(&value))
                else {
                    continue;
                };
                if summary.health.is_not_ready() {
                    owned.not_ready.insert(key.clone(), summary.clone());
                }
                owned.objects.insert(
                    key,
                    Published {
                        hash: wire::hash(&value),
                        health: summary.health,
                        revision: summary.revision,
                    },
                );
            }
            Some(keys::StateKey::Cluster(cluster)) => {
                if let Some(owned) = out.get_mut(&cluster) {
                    owned.state = wire::read::<ClusterState>(&value).ok();
                    owned.report = owned.state.as_ref().and_then(|s| s.report.clone());
                }
            }
            // Counted again by the new owner.
            Some(keys::StateKey::Summary(_)) | None => {}
        }
    }
    Ok(out)
}
