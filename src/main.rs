//! The `fluxfleet` binary: parse the command line, run the command, exit non-zero on failure.

use std::path::PathBuf;
use std::process::ExitCode;

use fluxfleet::cli::{ActArgs, Cli, CollectArgs, Command, DemoArgs, FleetArgs, SimArgs, UiArgs};
use fluxfleet::export::get::get;
use fluxfleet::export::inventory::inventory;
use fluxfleet::export::request::exit;
use fluxfleet::fleet::actions::Verb;

/// mimalloc: reading a fleet allocates and frees millions of small values across threads, and
/// glibc's malloc spent a fifth of a 2,000-cluster start-up on it (1.6 s instead of 2.1 s).
/// Without transparent huge pages, which would round each thread's memory up to 2 MiB pages.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse_args();
    // One socket per cluster (and per watch over HTTP/1.1): a fleet needs more descriptors than
    // the usual soft limit of 1024. Failing to raise it is not fatal.
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("fluxfleet: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(name) = cli.command.as_ref().and_then(own_fleet)
        && cli.fleet.nats.is_some()
    {
        eprintln!(
            "fluxfleet: {name} runs its own simulated fleet and does not read collectors: drop --nats (or unset FLUXFLEET_NATS)"
        );
        return ExitCode::from(exit::USAGE);
    }
    let global = (&cli.fleet, &cli.ui);
    let result = match cli.command {
        Some(Command::Get(args)) => return report(&runtime, args.request(&cli.fleet), get),
        Some(Command::Rollout(args)) => {
            return report(
                &runtime,
                args.request(&cli.fleet),
                fluxfleet::export::rollout::rollout,
            );
        }
        Some(Command::Workloads(args)) => {
            return report(
                &runtime,
                args.request(&cli.fleet),
                fluxfleet::export::workloads::workloads,
            );
        }
        Some(Command::Alert(args)) => {
            return report(
                &runtime,
                args.request(&cli.fleet),
                fluxfleet::export::alert::alert,
            );
        }
        Some(Command::Mcp(args)) => {
            logs();
            let request = args.request(&cli.fleet, &cli.ui);
            return ExitCode::from(runtime.block_on(fluxfleet::mcp::mcp(request)));
        }
        Some(Command::Suspend(args)) => return act(&runtime, global, &args, Verb::Suspend),
        Some(Command::Resume(args)) => return act(&runtime, global, &args, Verb::Resume),
        Some(Command::Reconcile(args)) => return act(&runtime, global, &args, Verb::Reconcile),
        Some(Command::Inventory(args)) => {
            return ExitCode::from(runtime.block_on(inventory(&cli.fleet.sources(), args.output)));
        }
        Some(Command::Sim(args)) => runtime.block_on(sim(args)),
        Some(Command::Collect(args)) => runtime.block_on(collect(args, cli.fleet.clone())),
        Some(Command::Demo(args)) => {
            runtime.block_on(demo(args, cli.fleet.clone(), cli.ui.clone()))
        }
        Some(Command::Completions { shell }) => {
            use clap::CommandFactory;
            let mut command = Cli::command();
            clap_complete::generate(shell, &mut command, "fluxfleet", &mut std::io::stdout());
            Ok(())
        }
        None => runtime.block_on(tui(cli.fleet.clone(), cli.ui.clone())),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fluxfleet: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The commands whose fleet is their own simulator, never the bus.
fn own_fleet(command: &Command) -> Option<&'static str> {
    match command {
        Command::Demo(_) => Some("fluxfleet demo"),
        Command::Sim(_) => Some("fluxfleet sim"),
        _ => None,
    }
}

fn act(
    runtime: &tokio::runtime::Runtime,
    (fleet, ui): (&FleetArgs, &UiArgs),
    args: &ActArgs,
    verb: Verb,
) -> ExitCode {
    let request = match args.request(verb, fleet, ui) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fluxfleet: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    logs();
    ExitCode::from(runtime.block_on(fluxfleet::export::act::act(request)))
}

/// `FLUXFLEET_LOG`, default warnings only.
fn log_level() -> tracing_subscriber::EnvFilter {
    tracing_subscriber::EnvFilter::try_from_env("FLUXFLEET_LOG").unwrap_or_else(|_| "warn".into())
}

/// Logs go to stderr, at `FLUXFLEET_LOG` (default: warnings only).
fn logs() {
    tracing_subscriber::fmt()
        .with_env_filter(log_level())
        .with_writer(std::io::stderr)
        .init();
}

async fn sim(args: SimArgs) -> anyhow::Result<()> {
    logs();
    // Listen for signals before saying we are up: a supervisor may stop us right after the line.
    let mut stop = Signals::install()?;
    let config = args.config();
    let handle = fluxfleet_sim::start(config.clone()).await?;
    println!(
        "fluxfleet sim: {} clusters in {} workspaces ({} objects each, the {} scenario) serving on {} — kubeconfigs in {} (fleet.kubeconfig, viewer.kubeconfig, management.kubeconfig), ready in {:.2?}",
        config.clusters,
        config.workspaces,
        config.objects,
        config.scenario.name(),
        handle.base_url,
        handle.files.dir.display(),
        handle.startup,
    );
    stop.wait().await;
    handle.shutdown().await;
    Ok(())
}

/// `fluxfleet collect`: the clusters of the fleet's sources (kubeconfigs, management clusters),
/// this collector's share of them watched and published until SIGINT or SIGTERM.
async fn collect(args: CollectArgs, fleet: FleetArgs) -> anyhow::Result<()> {
    logs();
    let Some(options) = fleet.nats_options() else {
        anyhow::bail!("collect publishes to NATS: give --nats URL (or FLUXFLEET_NATS)");
    };
    let mut stop = Signals::install()?;
    let resolved = fluxfleet::session::resolve::resolve(&fleet.sources()).await;
    for w in &resolved.warnings {
        eprintln!("warning: {}", fluxfleet::export::table::safe(w));
    }
    if resolved.inventory.clusters.is_empty() {
        anyhow::bail!("no clusters to collect (see the warnings above)");
    }
    let id = args
        .id
        .clone()
        .unwrap_or_else(|| format!("{}-{}", fluxfleet::audit::local_host(), std::process::id()));
    let token = tokio_util::sync::CancellationToken::new();
    let request = fluxfleet::bus::collector::Request {
        options,
        id: id.clone(),
        retention: fluxfleet::bus::Retention {
            history: args.history,
            ttl: args.ttl,
            replicas: args.replicas,
        },
        clusters: resolved.inventory.clusters,
        settings: resolved.config.engine,
        refresh: Some(refresh(fleet.sources())),
        status: Default::default(),
    };
    serve_endpoints(&args, &request.status, &token).await?;
    eprintln!(
        "fluxfleet collect {id}: {} clusters in the fleet, publishing to bucket {}",
        request.clusters.len(),
        request.options.bucket
    );
    let stopping = token.clone();
    let run = fluxfleet::bus::collector::run(request, token);
    tokio::pin!(run);
    tokio::select! {
        result = &mut run => return result.map_err(anyhow::Error::msg),
        _ = stop.wait() => stopping.cancel(),
    }
    run.await.map_err(anyhow::Error::msg)
}

/// The collector's metrics and probes, on their addresses (one listener when they are the same):
/// a port already taken is an error before anything starts.
async fn serve_endpoints(
    args: &CollectArgs,
    status: &std::sync::Arc<fluxfleet::bus::collector::status::Status>,
    stop: &tokio_util::sync::CancellationToken,
) -> anyhow::Result<()> {
    let mut addresses: Vec<(std::net::SocketAddr, &str)> = Vec::new();
    if let Some(at) = args.metrics_addr {
        addresses.push((at, "/metrics"));
    }
    if let Some(at) = args.health_addr {
        match addresses.iter_mut().find(|(a, _)| *a == at) {
            Some(same) => same.1 = "/metrics, /healthz and /readyz",
            None => addresses.push((at, "/healthz and /readyz")),
        }
    }
    for (at, what) in addresses {
        let listener = tokio::net::TcpListener::bind(at)
            .await
            .map_err(|e| anyhow::anyhow!("serving {what} on {at}: {e}"))?;
        eprintln!("fluxfleet collect: serving {what} on http://{at}");
        tokio::spawn(fluxfleet::bus::collector::serve::serve(
            listener,
            status.clone(),
            stop.clone(),
        ));
    }
    Ok(())
}

/// The fleet read again for a collector; any problem keeps the fleet as it was.
fn refresh(sources: fluxfleet::session::resolve::Sources) -> fluxfleet::bus::collector::Refresh {
    std::sync::Arc::new(move || {
        let sources = sources.clone();
        Box::pin(async move {
            let resolved = fluxfleet::session::resolve::resolve(&sources).await;
            match resolved.inventory.problems.first() {
                Some(problem) => Err(problem.to_string()),
                None => Ok(resolved.inventory.clusters),
            }
        })
    })
}

/// The TUI's logs go to a file (the screen is the TUI's): `fluxfleet.log` in the platform state
/// directory, at `FLUXFLEET_LOG` (default: warnings only), owner-only.
fn file_logs() -> Option<PathBuf> {
    let dirs = directories::ProjectDirs::from("dev", "fluxfleet", "fluxfleet")?;
    let dir = dirs
        .state_dir()
        .unwrap_or(dirs.data_local_dir())
        .to_path_buf();
    let path = dir.join("fluxfleet.log");
    let file = fluxfleet::private::append(&path).ok()?;
    tracing_subscriber::fmt()
        .with_env_filter(log_level())
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .init();
    Some(path)
}

async fn tui(fleet: FleetArgs, ui: UiArgs) -> anyhow::Result<()> {
    // The TUI reads the objects of the clusters it opens: counts suffice for the rest.
    let sources = fluxfleet::session::resolve::Sources {
        counts_suffice: true,
        ..fleet.sources()
    };
    let opened = fluxfleet::session::open::open(&sources)
        .await
        .map_err(anyhow::Error::msg)?;
    if opened.fleet.is_empty() {
        for w in &opened.warnings {
            eprintln!("fluxfleet: {}", fluxfleet::export::table::safe(w));
        }
        anyhow::bail!("{}", opened.fleet.empty_why());
    }
    file_logs();
    fluxfleet::app::tui(fluxfleet::app::Start {
        config: opened.config,
        config_path: opened.config_path,
        warnings: opened.warnings,
        fleet: opened.fleet,
        mode: ui.flag(),
        theme: ui.theme,
        journal: fluxfleet::audit::default_path(),
    })
    .await
}

async fn demo(args: DemoArgs, fleet: FleetArgs, ui: UiArgs) -> anyhow::Result<()> {
    // Removed when this returns (the TUI also ends on SIGTERM and SIGHUP to get here).
    let private = fluxfleet_sim::private_dir(&std::env::temp_dir(), "fluxfleet-demo-")?;
    let dir = private.path().to_path_buf();
    let config = fluxfleet_sim::Config {
        clusters: args.clusters,
        workspaces: args.workspaces,
        objects: 30,
        out: dir.clone(),
        churn: 5.0,
        rollout_interval: std::time::Duration::from_secs(60),
        rollout_step: std::time::Duration::from_secs(10),
        report_every: std::time::Duration::from_secs(60),
        // The story brings its own trouble (a flaky region, clusters nobody reaches); a few
        // clusters run an older Flux, as fleets do.
        faults: fluxfleet_sim::faults::Spec::parse("old-flux=3%").map_err(anyhow::Error::msg)?,
        scenario: fluxfleet_sim::Scenario::Story,
        ..fluxfleet_sim::Config::default()
    };
    file_logs();
    let handle = fluxfleet_sim::start(config).await?;
    // The user's keymap and theme apply to the demo too; its fleet is the simulator's.
    let (engine, path, warnings) = fluxfleet::session::resolve::load_config(&fleet.sources());
    let request = fluxfleet::inventory::Request {
        dirs: vec![dir.join("kubeconfigs")],
        ..fluxfleet::inventory::Request::default()
    };
    let inventory = fluxfleet::inventory::load(&request, &engine);
    let result = fluxfleet::app::tui(fluxfleet::app::Start {
        config: engine,
        config_path: path,
        warnings,
        fleet: fluxfleet::session::open::Fleet::Kubeconfigs {
            inventory,
            managements: Vec::new(),
        },
        mode: Some(ui.flag().unwrap_or(fluxfleet::config::Mode::Write)),
        theme: ui.theme,
        journal: fluxfleet::audit::default_path(),
    })
    .await;
    handle.shutdown().await;
    drop(private);
    result
}

/// SIGINT and SIGTERM, registered up front.
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> anyhow::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    async fn wait(&mut self) {
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
    }
}

/// A command that reads the fleet and reports: its request, or the usage error that stops it.
fn report<R, E: std::fmt::Display, F: std::future::Future<Output = u8>>(
    runtime: &tokio::runtime::Runtime,
    request: Result<R, E>,
    run: impl FnOnce(R) -> F,
) -> ExitCode {
    match request {
        Ok(request) => {
            logs();
            ExitCode::from(runtime.block_on(run(request)))
        }
        Err(e) => {
            eprintln!("fluxfleet: {e}");
            ExitCode::from(exit::USAGE)
        }
    }
}
