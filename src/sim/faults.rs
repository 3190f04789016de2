//! Per-cluster faults, chosen by a spec such as
//! `unreachable=2%,slow=5%:800ms,flap=3%:20s,gone=1%,error5xx=1%,throttle=5%:4,expired-token=1%,no-flux=1%,old-flux=5%,forbidden=1%:HelmRelease,old-kube=5%,no-watch-list=2%,strips-watch-list=1%,old-etcd=1%,forbidden-logs=5%,forbidden-events=5%,hostile-workloads=1%,hidden-events=1%:flux-system,drain=1%:60s,handover=1%:30s,silent=1%,denied-verb=1%:suspend/Kustomization`.

use std::time::Duration;

use super::rng::Rng;
use crate::facts::{FluxKind, FluxRelease};

/// Which credentials a request carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Admin,
    Viewer,
    /// A person impersonated whom no binding of this cluster names: may do nothing.
    Nobody,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Viewer => "viewer",
            Role::Nobody => "nobody",
        }
    }
}

/// What can go wrong with one cluster.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Faults {
    /// The kubeconfig points at a closed port.
    pub unreachable: bool,
    /// Every response is delayed this long.
    pub slow: Option<Duration>,
    /// Watch streams are cut after this long.
    pub flap: Option<Duration>,
    /// The server is told to stop, as kube-apiserver on SIGTERM: every connection is sent
    /// GOAWAY and its open streams are closed this long after; new connections are refused.
    pub drain: Option<Duration>,
    /// A replica behind a load balancer goes away: the connections open when the fault began,
    /// and later every connection once it is this old, are sent GOAWAY, their open streams
    /// closed this long after; new connections are served (by another replica).
    pub handover: Option<Duration>,
    /// The server hangs: nothing more is read or written on its connections, which stay open,
    /// and new connections to it get no answer.
    pub silent: bool,
    /// The change history is compacted this often: every watch gets 410 Gone and relists.
    pub gone: Option<Duration>,
    /// This fraction of requests fails with 500/503.
    pub error5xx: Option<f64>,
    /// API Priority and Fairness with this many seats: a request that finds them all taken is
    /// answered 429 Too Many Requests with `Retry-After: 1`, as kube-apiserver answers when a
    /// priority level's queues are full.
    pub throttle: Option<u32>,
    /// The admin and viewer tokens stop working this long after start.
    pub expired_token: Option<Duration>,
    /// Flux is not installed: no Flux API groups.
    pub no_flux: bool,
    /// An older Flux release that serves older API versions.
    pub old_flux: Option<FluxRelease>,
    /// RBAC forbids everybody to read this kind (a role that cannot see HelmReleases).
    pub forbidden: Option<FluxKind>,
    /// A Kubernetes older than aggregated discovery (before 1.26): `/apis` lists groups only, and
    /// a streaming list is refused (422: `resourceVersionMatch` is forbidden for a watch).
    pub old_kube: bool,
    /// A Kubernetes 1.27–1.33 with its `WatchList` feature gate off: a streaming list is refused
    /// (422: `sendInitialEvents` is forbidden for a watch).
    pub no_watch_list: bool,
    /// kube-apiserver with its watch cache over an etcd before 3.4.31: a streaming list is
    /// taken (200), then failed by its first event (ERROR 500 "RequestWatchProgress is
    /// disabled").
    pub old_etcd: bool,
    /// A proxy before the server drops the watch-list parameters: a streaming list is served as
    /// a plain watch from now, its initial events never marked ended.
    pub strips_watch_list: bool,
    /// RBAC lets nobody read `pods/log` (pods, events and workloads read fine).
    pub forbidden_logs: bool,
    /// RBAC lets nobody create Events (reading them, and every Flux action, still work).
    pub forbidden_events: bool,
    /// A failing workload is hostile: 5,000 pods, a log line of 10 MB that ignores
    /// `limitBytes`, terminal escapes in its events.
    pub hostile_workloads: bool,
    /// RBAC lets nobody read Events in this namespace (a team's credentials that stop at its
    /// own namespaces: the sources in `flux-system` are out of reach).
    pub hidden_events: Option<String>,
    /// The Roles grant nobody Flux's custom verb (`suspend`, `resume`, `reconcile`, as the
    /// Flux web UI asks) on this kind (None: on every Flux kind): access reviews say no; the
    /// patches themselves are still allowed, as `patch` is.
    pub denied_verb: Option<(String, Option<FluxKind>)>,
    /// The people the admin credentials may impersonate here, and the role this cluster's
    /// bindings give each: a user name, or `group:NAME` for everyone of a group. A person no
    /// entry names may do nothing (every request 403, naming them).
    pub people: Vec<(String, Role)>,
}

impl Faults {
    pub fn is_empty(&self) -> bool {
        *self == Faults::default()
    }

    /// Short names of the active faults, for `/sim/truth` and logs.
    pub fn names(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut push = |on: bool, name: String| {
            if on {
                out.push(name);
            }
        };
        push(self.unreachable, "unreachable".into());
        push(
            self.slow.is_some(),
            format!("slow:{:?}", self.slow.unwrap_or_default()),
        );
        push(
            self.flap.is_some(),
            format!("flap:{:?}", self.flap.unwrap_or_default()),
        );
        push(
            self.drain.is_some(),
            format!("drain:{:?}", self.drain.unwrap_or_default()),
        );
        push(
            self.handover.is_some(),
            format!("handover:{:?}", self.handover.unwrap_or_default()),
        );
        push(self.silent, "silent".into());
        push(
            self.gone.is_some(),
            format!("gone:{:?}", self.gone.unwrap_or_default()),
        );
        push(
            self.error5xx.is_some(),
            format!("error5xx:{}", self.error5xx.unwrap_or_default()),
        );
        push(
            self.throttle.is_some(),
            format!("throttle:{}", self.throttle.unwrap_or_default()),
        );
        push(
            self.expired_token.is_some(),
            format!("expired-token:{:?}", self.expired_token.unwrap_or_default()),
        );
        push(self.no_flux, "no-flux".into());
        push(self.old_kube, "old-kube".into());
        push(self.no_watch_list, "no-watch-list".into());
        push(self.strips_watch_list, "strips-watch-list".into());
        push(self.old_etcd, "old-etcd".into());
        push(self.forbidden_logs, "forbidden-logs".into());
        push(self.forbidden_events, "forbidden-events".into());
        push(self.hostile_workloads, "hostile-workloads".into());
        push(
            self.hidden_events.is_some(),
            format!(
                "hidden-events:{}",
                self.hidden_events.as_deref().unwrap_or_default()
            ),
        );
        push(
            self.old_flux.is_some(),
            format!(
                "old-flux:{}",
                self.old_flux.map(|r| r.name()).unwrap_or_default()
            ),
        );
        push(
            self.forbidden.is_some(),
            format!(
                "forbidden:{}",
                self.forbidden.map(|k| k.as_str()).unwrap_or_default()
            ),
        );
        for (who, role) in &self.people {
            out.push(format!("person:{who}={}", role.name()));
        }
        if let Some((verb, kind)) = &self.denied_verb {
            let on = kind.map(|k| format!("/{}", k.as_str())).unwrap_or_default();
            out.push(format!("denied-verb:{verb}{on}"));
        }
        out
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Unreachable,
    Slow(Duration),
    Flap(Duration),
    Drain(Duration),
    Handover(Duration),
    Silent,
    Gone(Duration),
    Error5xx(f64),
    Throttle(u32),
    ExpiredToken(Duration),
    NoFlux,
    OldFlux(Option<FluxRelease>),
    Forbidden(FluxKind),
    OldKube,
    NoWatchList,
    StripsWatchList,
    OldEtcd,
    ForbiddenLogs,
    ForbiddenEvents,
    HostileWorkloads,
    HiddenEvents(String),
    DeniedVerb(String, Option<FluxKind>),
}

/// A parsed `--faults` spec: each fault with the share of clusters it hits.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Spec(Vec<(Kind, f64)>);

/// A fault's time: a number and a unit, `ms`, `s`, `m` or `h` (`800ms`, `20s`, `5m`); no unit
/// means seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, scale) = [("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)]
        .into_iter()
        .find_map(|(unit, scale)| text.strip_suffix(unit).map(|n| (n, scale)))
        .unwrap_or((text, 1.0));
    let seconds: f64 = number
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite() && *n >= 0.0)
        .ok_or_else(|| format!("invalid duration {text:?} (try 800ms, 20s, 5m)"))?;
    Duration::try_from_secs_f64(seconds * scale).map_err(|_| format!("{text:?} is too long"))
}

impl Spec {
    pub fn parse(spec: &str) -> Result<Spec, String> {
        let mut out = Vec::new();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, rest) = item
                .split_once('=')
                .ok_or_else(|| format!("fault {item:?}: expected NAME=PERCENT[:PARAM]"))?;
            let (pct, param) = match rest.split_once(':') {
                Some((p, a)) => (p, Some(a)),
                None => (rest, None),
            };
            let pct: f64 = pct
                .trim()
                .trim_end_matches('%')
                .parse()
                .map_err(|_| format!("fault {name:?}: {pct:?} is not a percentage"))?;
            if !(0.0..=100.0).contains(&pct) {
                return Err(format!("fault {name:?}: {pct}% is not between 0 and 100"));
            }
            let dur = |default: f64| -> Result<Duration, String> {
                param
                    .map_or(Ok(Duration::from_secs_f64(default)), parse_duration)
                    .map_err(|e| format!("fault {name:?}: {e}"))
            };
            let kind = match name.trim() {
                "unreachable" => Kind::Unreachable,
                "slow" => Kind::Slow(dur(0.8)?),
                "flap" => Kind::Flap(dur(20.0)?),
                "drain" => Kind::Drain(dur(60.0)?),
                "handover" => Kind::Handover(dur(30.0)?),
                "silent" => Kind::Silent,
                "gone" => Kind::Gone(dur(30.0)?),
                "error5xx" => {
                    Kind::Error5xx(match param {
                        Some(p) => {
                            p.trim().trim_end_matches('%').parse::<f64>().map_err(|_| {
                                format!("fault \"error5xx\": {p:?} is not a percentage")
                            })? / 100.0
                        }
                        None => 0.5,
                    })
                }
                "throttle" => Kind::Throttle(match param {
                    Some(p) => p
                        .trim()
                        .parse::<u32>()
                        .ok()
                        .filter(|seats| *seats > 0)
                        .ok_or_else(|| {
                            format!(
                                "fault \"throttle\": {p:?} is not a number of seats (1 or more)"
                            )
                        })?,
                    None => 4,
                }),
                "expired-token" => Kind::ExpiredToken(dur(60.0)?),
                "no-flux" => Kind::NoFlux,
                "old-kube" => Kind::OldKube,
                "no-watch-list" => Kind::NoWatchList,
                "strips-watch-list" => Kind::StripsWatchList,
                "old-etcd" => Kind::OldEtcd,
                "forbidden-logs" => Kind::ForbiddenLogs,
                "forbidden-events" => Kind::ForbiddenEvents,
                "hostile-workloads" => Kind::HostileWorkloads,
                "hidden-events" => Kind::HiddenEvents(
                    param
                        .map(str::trim)
                        .filter(|ns| !ns.is_empty())
                        .unwrap_or("flux-system")
                        .to_string(),
                ),
                "old-flux" => Kind::OldFlux(match param {
                    Some(p) => Some(parse_release(p).ok_or_else(|| {
                        format!(
                            "fault \"old-flux\": {p:?} is not a Flux release such as 2.0 or v2.6"
                        )
                    })?),
                    None => None,
                }),
                "forbidden" => Kind::Forbidden(match param {
                    Some(p) => FluxKind::from_kind(p.trim())
                        .ok_or_else(|| format!("fault \"forbidden\": {p:?} is not a Flux kind"))?,
                    None => FluxKind::HelmRelease,
                }),
                "denied-verb" => {
                    let p = param.map(str::trim).unwrap_or("suspend");
                    let (verb, kind) = p.split_once('/').unwrap_or((p, ""));
                    if !["suspend", "resume", "reconcile"].contains(&verb) {
                        return Err(format!(
                            "fault \"denied-verb\": {verb:?} is not one of Flux's verbs (suspend, resume, reconcile)"
                        ));
                    }
                    let kind = match kind {
                        "" => None,
                        k => Some(FluxKind::from_kind(k).ok_or_else(|| {
                            format!("fault \"denied-verb\": {k:?} is not a Flux kind")
                        })?),
                    };
                    Kind::DeniedVerb(verb.to_string(), kind)
                }
                other => {
                    return Err(format!(
                        "unknown fault {other:?} (known: unreachable, slow, flap, drain, handover, silent, gone, error5xx, throttle, expired-token, no-flux, old-flux, forbidden, old-kube, no-watch-list, strips-watch-list, old-etcd, forbidden-logs, forbidden-events, hostile-workloads, hidden-events, denied-verb)"
                    ));
                }
            };
            out.push((kind, pct / 100.0));
        }
        Ok(Spec(out))
    }

    /// Chooses, reproducibly for `seed`, which of `n` clusters get which faults.
    pub fn assign(&self, n: usize, seed: u64) -> Vec<Faults> {
        let mut out = vec![Faults::default(); n];
        for (i, (kind, share)) in self.0.iter().enumerate() {
            let count = if *share > 0.0 {
                ((share * n as f64).round() as usize).clamp(1, n)
            } else {
                0
            };
            let mut rng = Rng::fork(seed, &format!("fault-{i}"));
            let mut order: Vec<usize> = (0..n).collect();
            for j in (1..order.len()).rev() {
                order.swap(j, rng.below(j + 1));
            }
            // Clusters without a fault first: combined faults (no Flux *and* old Flux) only when
            // the shares add up to more than the fleet.
            order.sort_by_key(|&c| !out[c].is_empty());
            for &c in order.iter().take(count) {
                let f = &mut out[c];
                match kind {
                    Kind::Unreachable => f.unreachable = true,
                    Kind::Slow(d) => f.slow = Some(*d),
                    Kind::Flap(d) => f.flap = Some(*d),
                    Kind::Drain(d) => f.drain = Some(*d),
                    Kind::Handover(d) => f.handover = Some(*d),
                    Kind::Silent => f.silent = true,
                    Kind::Gone(d) => f.gone = Some(*d),
                    Kind::Error5xx(p) => f.error5xx = Some(*p),
                    Kind::Throttle(seats) => f.throttle = Some(*seats),
                    Kind::ExpiredToken(d) => f.expired_token = Some(*d),
                    Kind::NoFlux => f.no_flux = true,
                    Kind::OldKube => f.old_kube = true,
                    Kind::NoWatchList => f.no_watch_list = true,
                    Kind::StripsWatchList => f.strips_watch_list = true,
                    Kind::OldEtcd => f.old_etcd = true,
                    Kind::ForbiddenLogs => f.forbidden_logs = true,
                    Kind::ForbiddenEvents => f.forbidden_events = true,
                    Kind::HostileWorkloads => f.hostile_workloads = true,
                    Kind::HiddenEvents(ns) => f.hidden_events = Some(ns.clone()),
                    Kind::Forbidden(k) => f.forbidden = Some(*k),
                    Kind::DeniedVerb(verb, kind) => f.denied_verb = Some((verb.clone(), *kind)),
                    Kind::OldFlux(r) => {
                        let releases = [
                            FluxRelease(0),
                            FluxRelease(2),
                            FluxRelease(3),
                            FluxRelease(6),
                        ];
                        f.old_flux = Some(r.unwrap_or(*rng.pick(&releases)));
                    }
                }
            }
        }
        out
    }
}

fn parse_release(s: &str) -> Option<FluxRelease> {
    let minor = s.trim().trim_start_matches('v').strip_prefix("2.")?;
    let minor: u8 = minor.split('.').next()?.parse().ok()?;
    (minor <= FluxRelease::LATEST.0).then_some(FluxRelease(minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let spec = Spec::parse("unreachable=2%,slow=5%:800ms,flap=3%:20s,gone=1%,error5xx=1%,expired-token=1%,no-flux=1%,old-flux=5%,forbidden=1%:HelmRelease").unwrap();
        let faults = spec.assign(100, 1);
        let count = |f: &dyn Fn(&Faults) -> bool| faults.iter().filter(|x| f(x)).count();
        assert_eq!(count(&|f| f.unreachable), 2);
        assert_eq!(count(&|f| f.slow == Some(Duration::from_millis(800))), 5);
        assert_eq!(
            count(&|f| f.old_flux.is_some_and(|r| r < FluxRelease::LATEST)),
            5
        );
        assert_eq!(
            count(&|f| f.forbidden == Some(crate::facts::FluxKind::HelmRelease)),
            1
        );
        assert_eq!(faults, spec.assign(100, 1), "same seed, same assignment");
    }

    #[test]
    fn the_faults_of_connections_parse_with_their_whiles() {
        let spec = Spec::parse("drain=10%,handover=10%:5s,silent=10%").unwrap();
        let faults = spec.assign(10, 2);
        let one = |f: &dyn Fn(&Faults) -> bool| faults.iter().filter(|x| f(x)).count() == 1;
        assert!(one(&|f| f.drain == Some(Duration::from_secs(60))));
        assert!(one(&|f| f.handover == Some(Duration::from_secs(5))));
        assert!(one(&|f| f.silent));
        let names: Vec<String> = faults.iter().flat_map(Faults::names).collect();
        for name in ["drain:60s", "handover:5s", "silent"] {
            assert!(names.iter().any(|n| n == name), "{names:?}");
        }
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        assert!(
            Spec::parse("slowness=5%")
                .unwrap_err()
                .contains("unknown fault \"slowness\"")
        );
        assert!(
            Spec::parse("slow=abc")
                .unwrap_err()
                .contains("not a percentage")
        );
        assert!(
            Spec::parse("slow=5%:fast")
                .unwrap_err()
                .contains("invalid duration")
        );
        assert!(
            Spec::parse("forbidden=5%:Deployment")
                .unwrap_err()
                .contains("not a Flux kind")
        );
        assert!(
            Spec::parse("old-flux=5%:1.9")
                .unwrap_err()
                .contains("not a Flux release")
        );
        assert_eq!(
            Spec::parse("old-flux=100%:2.0").unwrap().assign(1, 0)[0].old_flux,
            Some(FluxRelease(0))
        );
    }

    #[test]
    fn faults_spread_over_distinct_clusters_first() {
        let faults = Spec::parse("no-flux=50%,old-flux=50%")
            .unwrap()
            .assign(4, 9);
        assert!(faults.iter().all(|f| f.no_flux != f.old_flux.is_some()));
    }

    #[test]
    fn a_small_share_still_hits_one_cluster() {
        assert_eq!(
            Spec::parse("no-flux=1%")
                .unwrap()
                .assign(10, 3)
                .iter()
                .filter(|f| f.no_flux)
                .count(),
            1
        );
    }
}
