//! A collector's setup: started together, every one opens the stores; it follows its management
//! cluster as clusters join and leave; its manifest's arguments are `collect`'s.

use crate::common;

use std::time::Duration;

use common::bus::{TTL, read, until};
use common::nats::NatsServer;
use fluxfleet::bus::{self, collector};
use tokio_util::sync::CancellationToken;

use super::options;

/// Collectors started together race to make the buckets and the history stream: every one of
/// them opens the stores (the losers take the winner's), none fails for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collectors_starting_together_all_open_the_stores() {
    let retention = bus::Retention {
        history: Duration::from_secs(3600),
        history_max_bytes: 1 << 30,
        ttl: TTL,
        replicas: 1,
    };
    // The race is lost now and then: thirty fresh servers, eight collectors each.
    for _ in 0..30 {
        let nats = NatsServer::start();
        let options = options(&nats);
        let opening = (0..8).map(|_| {
            let options = options.clone();
            tokio::spawn(async move {
                let client = bus::connect(&options, "test").await?;
                bus::open(client, &options, Some(retention))
                    .await
                    .map(|_| ())
            })
        });
        for opened in futures::future::join_all(opening).await {
            opened.unwrap().unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_follows_its_management_cluster_as_clusters_join_and_leave() {
    let _one_at_a_time = common::bus::one_at_a_time().await;
    use fluxfleet::k8s::management::{Management, extend};
    let nats = NatsServer::start();
    let options = options(&nats);
    let sim = common::start().await;
    let mut settings = common::engine_settings();
    settings.discovery_interval = Duration::from_millis(300);
    let management = sim.handle.files.management.clone();
    let load = {
        let settings = settings.clone();
        move || {
            let (management, settings) = (management.clone(), settings.clone());
            async move {
                let request = fluxfleet::inventory::Lookup {
                    kubeconfigs: vec![management],
                    ..Default::default()
                };
                let config = fluxfleet::config::Config::defaults();
                let mut inventory = fluxfleet::inventory::load(&request, &config);
                let managements = [Management {
                    context: "management".into(),
                    workspace_label: None,
                    depth: 1,
                }];
                extend(&mut inventory, &settings, &managements).await;
                match inventory.problems.first() {
                    Some(p) => Err(p.clone()),
                    None => Ok(inventory.clusters),
                }
            }
        }
    };
    let clusters = load().await.unwrap();
    let stop = CancellationToken::new();
    let refresh: collector::Refresh =
        std::sync::Arc::new(move || Box::pin(futures::FutureExt::map(load(), |r| r.map(Some))));
    let task = tokio::spawn(collector::run(
        collector::Collecting {
            options: options.clone(),
            id: "follower".into(),
            retention: bus::Retention {
                history: Duration::from_secs(3600),
                history_max_bytes: 1 << 30,
                ttl: TTL,
                replicas: 1,
            },
            clusters: clusters.clone(),
            // Every cluster but the management cluster is discovered, credentials and all.
            reread: common::bus::reread_of(&fluxfleet::inventory::Inventory {
                clusters: clusters.clone(),
                ..Default::default()
            }),
            settings,
            refresh: Some(refresh),
            shutdown: Duration::from_secs(10),
            status: Default::default(),
            rings: None,
        },
        stop.clone(),
    ));
    let names = sim.handle.cluster_names();
    let (template, leaving) = (&names[0], &names[1]);
    until(
        "every discovered cluster on the bus",
        Duration::from_secs(30),
        || async {
            let view = read(&options).await.ok()?;
            let missing: Vec<&String> = names.iter().filter(|n| !view.contains_key(*n)).collect();
            (!missing.is_empty()).then(|| format!("missing {missing:?}"))
        },
    )
    .await;
    assert!(sim.handle.copy_capi_cluster(template, "newcomer"));
    assert!(sim.handle.remove_capi_cluster(leaving));
    until(
        "the newcomer in, the leaver out",
        Duration::from_secs(30),
        || async {
            let view = match read(&options).await {
                Ok(v) => v,
                Err(e) => return Some(e.to_string()),
            };
            let newcomer = view
                .get("newcomer")
                .is_some_and(|objects| !objects.is_empty());
            let gone = !view.contains_key(leaving.as_str());
            (!(newcomer && gone)).then(|| format!("newcomer seen: {newcomer}, leaver gone: {gone}"))
        },
    )
    .await;
    stop.cancel();
    task.await.unwrap().unwrap();
    sim.handle.shutdown().await;
}

#[test]
fn the_collectors_manifest_reads_and_its_arguments_are_the_collectors() {
    let (docs, args) = common::manifest("collectors.yaml", "fluxfleet-collector-0");
    let deployment = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    assert_eq!(deployment["spec"]["replicas"], 3);
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    let cli = fluxfleet::cli::Cli::parse_words(&args).unwrap();
    let Some(fluxfleet::cli::CliCommand::Collect(collect)) = cli.command else {
        panic!("{args:?} is not `collect`");
    };
    assert_eq!(collect.id.as_deref(), Some("fluxfleet-collector-0"));
    assert_eq!(collect.ttl, Duration::from_secs(15));
    assert_eq!(
        collect.fleet.bus.nats.as_deref(),
        Some("nats://nats.nats.svc:4222")
    );
    assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
    // The probes ask the port the collector serves them on.
    let health = collect.probes.health_addr.unwrap().port();
    let ports = container["ports"].as_array().unwrap();
    let named = |name: &str| {
        ports
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| p["containerPort"].as_u64().unwrap() as u16)
    };
    assert_eq!(named("healthz"), Some(health));
    assert_eq!(
        named("http-metrics"),
        collect.probes.metrics_addr.map(|a| a.port())
    );
    for (probe, path) in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
        assert_eq!(container[probe]["httpGet"]["path"], path);
        assert_eq!(container[probe]["httpGet"]["port"], "healthz");
    }
}
