//! The watching half of a cluster task: one kube watcher per served kind on the cluster's one
//! connection, relists buffered into one atomic replacement, and the cluster's connection state
//! derived from where each kind's watch stands.

use std::collections::HashMap;
use std::time::Duration;

use futures::StreamExt;
use jiff::Timestamp;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::runtime::{WatchStreamExt, watcher};

use super::backoff::Backoff;
use super::cluster::{Connected, Ended, Reporter, Shared};
use super::errors::{self, Failure};
use super::summarize::{key_of, summarize};
use crate::fleet::index::Change;
use crate::fleet::{Connection, FluxKind, FluxSummary, Phase};

/// Where one kind's watch stands.
#[derive(Clone, Debug, PartialEq)]
enum KindState {
    Listing,
    Live,
    Forbidden(String),
    Failed(Failure, Timestamp),
}

/// Watches until the connection must be rebuilt. `permit` (a connecting slot) is released once
/// every kind has been listed, or after the connect timeout.
pub(super) async fn watch(
    reporter: &mut Reporter,
    connected: Connected,
    shared: &Shared,
    backoff: &mut Backoff,
    permit: tokio::sync::SemaphorePermit<'_>,
) -> Ended {
    let mut permit = Some(permit);
    let release_by = tokio::time::Instant::now() + shared.connect_timeout;
    let Connected {
        client,
        served,
        mut observations,
        protocol,
        expires,
    } = connected;
    let mut states: Vec<(FluxKind, KindState)> = served
        .iter()
        .map(|s| (s.kind, KindState::Listing))
        .collect();
    let plurals: HashMap<&str, FluxKind> =
        served.iter().map(|s| (s.kind.plural(), s.kind)).collect();
    let streams = served.iter().map(|s| {
        let resource = ApiResource {
            group: s.kind.group().into(),
            version: s.version.clone(),
            api_version: format!("{}/{}", s.kind.group(), s.version),
            kind: s.kind.as_str().into(),
            plural: s.kind.plural().into(),
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        let kind_backoff = Backoff::new(Duration::from_millis(500), shared.max_backoff, 0);
        let delay = kind_backoff.last_delay();
        let kind = s.kind;
        watcher(api, watcher::Config::default())
            .backoff(kind_backoff)
            .map(move |item| (kind, item, delay.clone()))
            .boxed()
    });
    let mut merged = futures::stream::select_all(streams);
    let watching: Box<[(FluxKind, Box<str>)]> = served
        .iter()
        .map(|s| (s.kind, s.version.as_str().into()))
        .collect();
    let mut buffers: HashMap<FluxKind, Vec<FluxSummary>> = HashMap::new();
    let renew_at = expires.map(|t| {
        let left = t.duration_since(Timestamp::now()).as_secs_f64() - 60.0;
        tokio::time::Instant::now() + Duration::from_secs_f64(left.max(1.0))
    });
    let report = |states: &[(FluxKind, KindState)]| {
        let mut c = derive(states);
        c.watching = watching.clone();
        c.protocol = protocol;
        c
    };
    if reporter.connection(report(&states)).await.is_err() {
        return Ended::Closed;
    }
    let mut changed = false;
    loop {
        let renew = async {
            match renew_at {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            item = merged.next() => {
                let Some((kind, item, delay)) = item else {
                    return Ended::Reconnect(Failure::new(Phase::Unreachable, "every watch ended"));
                };
                let state = match item {
                    Ok(event) => {
                        let change = match event {
                            watcher::Event::Init => {
                                buffers.insert(kind, Vec::new());
                                None
                            }
                            watcher::Event::InitApply(obj) => {
                                if let Some(s) = summarize(kind, obj) {
                                    buffers.entry(kind).or_default().push(s);
                                }
                                None
                            }
                            watcher::Event::InitDone => {
                                Some(Change::Replaced(kind, buffers.remove(&kind).unwrap_or_default()))
                            }
                            watcher::Event::Apply(obj) => summarize(kind, obj).map(Change::Applied),
                            watcher::Event::Delete(obj) => key_of(kind, &obj).map(Change::Deleted),
                        };
                        if let Some(change) = change
                            && reporter.send(change).await.is_err()
                        {
                            return Ended::Closed;
                        }
                        let listing = buffers.contains_key(&kind);
                        Some(if listing { KindState::Listing } else { KindState::Live })
                    }
                    Err(e) if errors::is_gone(&e) => None,
                    Err(e) => {
                        let failure = errors::of_watcher(&e);
                        match errors::status_code(&e) {
                            Some(401) => return Ended::Reconnect(failure),
                            // The kind is gone from the server (Flux uninstalled or downgraded).
                            Some(404) => return Ended::Reconnect(Failure::new(
                                Phase::ServerError,
                                format!("{kind} is no longer served; discovering again"),
                            )),
                            Some(403) => Some(KindState::Forbidden(failure.message)),
                            _ => {
                                let retry_at = Timestamp::now() + delay.get();
                                Some(KindState::Failed(failure, retry_at))
                            }
                        }
                    }
                };
                if let Some(state) = state
                    && let Some(slot) = states.iter_mut().find(|(k, _)| *k == kind)
                    && slot.1 != state
                {
                    slot.1 = state;
                    changed = true;
                }
            }
            observation = observations.recv() => {
                // A watch request answered 200 after its kind failed: it is back.
                if let Some(o) = observation
                    && o.watch
                    && o.status == 200
                    && let Some(kind) = plurals.get(o.resource.as_str())
                    && let Some(slot) = states.iter_mut().find(|(k, _)| k == kind)
                    && matches!(slot.1, KindState::Failed(..))
                {
                    slot.1 = KindState::Live;
                    changed = true;
                }
            }
            _ = tokio::time::sleep_until(release_by), if permit.is_some() => {
                // Listing is slow here: let other clusters go ahead.
                permit = None;
                continue;
            }
            _ = renew => return Ended::Renew,
        }
        // Most events leave every kind where it was: nothing to report.
        if !changed {
            continue;
        }
        changed = false;
        let connection = report(&states);
        if connection.phase != Phase::Syncing {
            permit = None;
        }
        if connection.phase == Phase::Live {
            backoff.reset();
        }
        if reporter.connection(connection).await.is_err() {
            return Ended::Closed;
        }
    }
}

/// The cluster's connection from the state of each kind's watch.
fn derive(states: &[(FluxKind, KindState)]) -> Connection {
    let forbidden: Box<[FluxKind]> = states
        .iter()
        .filter(|(_, s)| matches!(s, KindState::Forbidden(_)))
        .map(|(k, _)| *k)
        .collect();
    let failed = states.iter().filter_map(|(k, s)| match s {
        KindState::Failed(f, at) => Some((k, f, at)),
        _ => None,
    });
    let worst = failed.min_by_key(|(_, f, _)| f.phase);
    let mut connection = if let Some((_, failure, at)) = worst {
        let mut c = Connection::new(failure.phase);
        c.error = Some(failure.message.as_str().into());
        c.retry_at = Some(*at);
        c
    } else if !states.is_empty() && forbidden.len() == states.len() {
        let mut c = Connection::new(Phase::Forbidden);
        c.error = states.iter().find_map(|(_, s)| match s {
            KindState::Forbidden(m) => Some(m.as_str().into()),
            _ => None,
        });
        c
    } else if states.iter().any(|(_, s)| *s == KindState::Listing) {
        Connection::new(Phase::Syncing)
    } else {
        Connection::new(Phase::Live)
    };
    if !forbidden.is_empty() && connection.phase != Phase::Forbidden {
        let names: Vec<&str> = forbidden.iter().map(|k| k.as_str()).collect();
        connection.error.get_or_insert_with(|| {
            format!(
                "forbidden to list {}; the other kinds are visible",
                names.join(", ")
            )
            .into()
        });
    }
    connection.forbidden = forbidden;
    connection
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_is_live_only_when_every_kind_is_and_forbidden_kinds_are_named() {
        let ks = FluxKind::Kustomization;
        let hr = FluxKind::HelmRelease;
        let live = derive(&[(ks, KindState::Live), (hr, KindState::Live)]);
        assert_eq!(live.phase, Phase::Live);
        let syncing = derive(&[(ks, KindState::Live), (hr, KindState::Listing)]);
        assert_eq!(syncing.phase, Phase::Syncing);
        let partial = derive(&[
            (ks, KindState::Live),
            (hr, KindState::Forbidden("403".into())),
        ]);
        assert_eq!(partial.phase, Phase::Live);
        assert_eq!(&*partial.forbidden, [hr]);
        assert!(
            partial
                .error
                .unwrap()
                .contains("forbidden to list HelmRelease")
        );
        let all = derive(&[(ks, KindState::Forbidden("403 Forbidden: no".into()))]);
        assert_eq!(all.phase, Phase::Forbidden);
        let failing = derive(&[
            (
                ks,
                KindState::Failed(
                    Failure::new(Phase::ServerError, "503"),
                    Timestamp::UNIX_EPOCH,
                ),
            ),
            (hr, KindState::Live),
        ]);
        assert_eq!(failing.phase, Phase::ServerError);
        assert_eq!(failing.retry_at, Some(Timestamp::UNIX_EPOCH));
    }
}
