//! What the TUI's effects do, off the render path: reads of a cluster (events, YAML,
//! workloads, history), the journal read, actions carried out and journaled, plugins run.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::mpsc;

use super::handoff;
use crate::app::handoff::{Exit, PluginEnded};
use crate::app::update::{Effect, Msg};
use crate::app::view::Fetched;
use crate::app::{plugin_error, plugins};
use crate::proposals::{Decision, Keeper, StoreError, TargetOutcome};
use crate::session::{Reader, Writer};

/// How long the TUI's executor waits for a requested reconcile to be handled before the journal
/// calls it timed out (the results view keeps following the watch either way).
const TUI_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// Carries out effects off the render path, each in its own task; results come back as
/// messages. Reads always work; actions only with a [`Writer`], which a read-only session does
/// not have.
pub struct Clusters {
    pub reader: Reader,
    pub writer: Option<Writer>,
    pub journal: Option<PathBuf>,
    /// Where proposals are kept (beside the journal, or on the bus the fleet is read from).
    pub proposals: Option<Keeper>,
    pub concurrency: usize,
    /// How many clusters the engine keeps open (`warm_clusters`): drift opens no more at once.
    pub warm: usize,
    /// Each action records an Event on its targets (`[actions] events`).
    pub events: bool,
    /// The running action's executor, told which reconciles the watch shows handled.
    pub handled: Option<(u64, mpsc::UnboundedSender<crate::actions::Handled>)>,
}

impl super::run::Effects for Clusters {
    fn start(&mut self, effect: Effect, results: mpsc::UnboundedSender<Msg>) {
        match effect {
            Effect::FetchEvents {
                cluster,
                info,
                key,
                told,
            } => {
                let reader = self.reader.clone();
                tokio::spawn(async move {
                    let fetched = match reader.events(&info, &told).await {
                        Ok(events) => Fetched::Events(events),
                        Err(e) => Fetched::Failed("events", e.to_string()),
                    };
                    // The loop may have ended meanwhile: nobody to tell.
                    let _ = results.send(Msg::Fetched {
                        cluster,
                        key,
                        fetched,
                    });
                });
            }
            Effect::FetchYaml { cluster, info, key } => {
                let shown = |_: &_, object| Fetched::Yaml(crate::source::as_yaml(object));
                fetch_object(
                    self.reader.clone(),
                    cluster,
                    info,
                    key,
                    "yaml",
                    shown,
                    results,
                );
            }
            Effect::FetchRuns { cluster, info, key } => {
                let shown = |key: &crate::fleet::ObjectKey, object| {
                    Fetched::Runs(crate::fleet::runs::Runs::of(key.kind, &object))
                };
                fetch_object(
                    self.reader.clone(),
                    cluster,
                    info,
                    key,
                    "runs",
                    shown,
                    results,
                );
            }
            Effect::FetchWorkloads {
                key,
                clusters,
                infos,
            } => {
                let reader = self.reader.clone();
                tokio::spawn(async move {
                    let infos: Vec<crate::fleet::ClusterInfo> =
                        infos.iter().map(|i| (**i).clone()).collect();
                    let how = crate::session::evidence::Gather::default();
                    let folded = crate::session::evidence::gather(&reader, &infos, &key, how).await;
                    let _ = results.send(Msg::Workloads {
                        key,
                        clusters,
                        folded: Box::new(folded),
                    });
                });
            }
            Effect::FetchTrace { asked, infos } => {
                let reader = self.reader.clone();
                tokio::spawn(async move {
                    let infos: Vec<crate::fleet::ClusterInfo> =
                        infos.iter().map(|i| (**i).clone()).collect();
                    let how = crate::session::evidence::Gather::default();
                    let trace = crate::session::traced::gather(&reader, &infos, &asked, how).await;
                    let _ = results.send(Msg::Traced {
                        asked,
                        trace: Box::new(trace),
                    });
                });
            }
            Effect::FetchTree { root, infos } => {
                let reader = self.reader.clone();
                tokio::spawn(async move {
                    let infos: Vec<crate::fleet::ClusterInfo> =
                        infos.iter().map(|i| (**i).clone()).collect();
                    let how = crate::session::evidence::Gather::default();
                    let tree = crate::session::traced::grow(&reader, &infos, &root, how).await;
                    let _ = results.send(Msg::Grown {
                        root,
                        tree: Box::new(tree),
                    });
                });
            }
            Effect::ReadDrift { scope, key, plan } => {
                let reader = self.reader.clone();
                let warm = self.warm;
                tokio::spawn(async move {
                    let how = crate::session::evidence::Gather::default();
                    let now = jiff::Timestamp::now();
                    let drift =
                        crate::session::drift::asked(&plan, &reader, now, (how, warm)).await;
                    let _ = results.send(Msg::Drift {
                        scope,
                        key,
                        drift: Box::new(drift),
                    });
                });
            }
            Effect::Open(info) => self.reader.open(&info),
            Effect::ReadHistory(since) => {
                let reader = self.reader.clone();
                tokio::spawn(async move {
                    let _ = results.send(Msg::History(reader.history(since).await));
                });
            }
            Effect::ReadAudit => {
                let path = self.journal.clone();
                tokio::task::spawn_blocking(move || {
                    let _ = results.send(Msg::Audit(read_journal(path.as_deref())));
                });
            }
            Effect::ReadProposals => {
                let store = self.proposals.clone();
                tokio::spawn(async move {
                    let _ = results.send(Msg::Proposals(read_proposals(store.as_ref()).await));
                });
            }
            Effect::Decide { id, decision } => {
                let store = self.proposals.clone();
                tokio::spawn(async move {
                    let decided = decide(store.as_ref(), &id, decision).await;
                    let _ = results.send(Msg::Decided(decided.map(Box::new).map_err(Arc::new)));
                });
            }
            Effect::Act(job) => {
                let writer = self.writer.clone();
                let journal = self.journal.clone();
                let proposals = self.proposals.clone();
                let concurrency = self.concurrency.max(1);
                let (told, handled) = mpsc::unbounded_channel();
                self.handled = Some((job.run(), told));
                let how = Executor {
                    writer,
                    journal,
                    proposals,
                    concurrency,
                    events: self.events,
                };
                tokio::spawn(act(job, how, handled, results));
            }
            Effect::Plugin(launch) => {
                let what = launch.describe();
                match self.prepare(launch) {
                    Ok(prepared) => {
                        tokio::spawn(async move {
                            let _ = results.send(Msg::Plugin(handoff::background(prepared).await));
                        });
                    }
                    Err(why) => {
                        let _ = results.send(Msg::Plugin(PluginEnded {
                            what,
                            exit: Exit::NotRun(why.to_string()),
                            tail: Vec::new(),
                        }));
                    }
                }
            }
            Effect::Handled { run, cluster, key } => {
                if let Some((current, told)) = &self.handled
                    && *current == run
                {
                    let _ = told.send(crate::actions::Handled { cluster, key });
                }
            }
        }
    }

    fn prepare(
        &mut self,
        launch: plugins::Launch,
    ) -> Result<handoff::Prepared, plugin_error::PluginError> {
        handoff::prepare(
            launch,
            &self.reader,
            self.writer.as_ref(),
            self.journal.as_deref(),
        )
    }
}

/// What carrying a job out needs.
struct Executor {
    writer: Option<Writer>,
    journal: Option<PathBuf>,
    proposals: Option<Keeper>,
    concurrency: usize,
    events: bool,
}

/// Sends every target's patches, reports each outcome as it comes, then journals the attempt.
/// A proposal's job is claimed first (of two people approving at once, one acts) and its
/// outcomes recorded on it after.
async fn act(
    job: crate::actions::Job,
    executor: Executor,
    handled: mpsc::UnboundedReceiver<crate::actions::Handled>,
    results: mpsc::UnboundedSender<Msg>,
) {
    use crate::actions::{Update, Watch};
    use crate::fleet::verbs;
    if let Some(proposed) = job.proposal() {
        let now = jiff::Timestamp::now();
        let approved = Decision::Approved {
            by: proposed.approved_by.clone(),
            at: now,
        };
        let claimed = decide(executor.proposals.as_ref(), &proposed.id, approved).await;
        let refused = claimed.as_ref().err().map(ToString::to_string);
        let _ = results.send(Msg::Decided(claimed.map(Box::new).map_err(Arc::new)));
        if let Some(why) = refused {
            for t in job.targets() {
                let _ = results.send(Msg::Acted {
                    run: job.run(),
                    cluster: t.cluster,
                    key: t.key.clone(),
                    outcome: verbs::Outcome::Refused(why.clone()),
                });
            }
            return;
        }
    }
    let how = crate::actions::Carry {
        writer: executor.writer.as_ref(),
        // A reconcile is followed to "handled" in the watch (the event loop tells), not polled.
        wait: Some(TUI_WAIT),
        concurrency: executor.concurrency,
        journal: executor.journal.as_deref(),
        tool: None,
        events: executor.events,
    };
    let report = |t: &crate::actions::Target, update: Update<'_>, _: &crate::actions::Progress| {
        // Accepted shows as requested until the watch shows it handled.
        let outcome = match update {
            Update::Requested => verbs::Outcome::Done,
            Update::Ended(outcome, _) => outcome.clone(),
        };
        let _ = results.send(Msg::Acted {
            run: job.run(),
            cluster: t.cluster,
            key: t.key.clone(),
            outcome,
        });
    };
    let (ended, journaled) =
        crate::actions::carry_out(&job, how, Some(Watch::Told(handled)), report).await;
    if let Err(e) = journaled {
        tracing::warn!(error = %e, "audit journal");
    }
    if let (Some(proposed), Some(store)) = (job.proposal(), &executor.proposals) {
        let outcomes = ended.iter().map(TargetOutcome::of).collect();
        if let Err(e) = store.record_outcomes(&proposed.id, outcomes).await {
            tracing::warn!(error = %e, "proposal outcomes");
        }
    }
}

/// Every proposal, newest first; one that cannot be read as one is logged and left out.
async fn read_proposals(store: Option<&Keeper>) -> crate::app::model::Proposals {
    let store = store.ok_or(StoreError::NoDirectory)?;
    let (found, problems) = store.list().await?;
    for problem in problems {
        tracing::warn!(error = %problem, "proposal");
    }
    Ok(found)
}

async fn decide(
    store: Option<&Keeper>,
    id: &str,
    decision: Decision,
) -> Result<crate::proposals::Proposal, StoreError> {
    let store = store.ok_or(StoreError::NoDirectory)?;
    store.decide(id, decision, jiff::Timestamp::now()).await
}

/// The journal's last 500 lines, newest first, as attempts ([`crate::audit::attempts`]).
fn read_journal(
    path: Option<&std::path::Path>,
) -> Result<Vec<String>, std::sync::Arc<crate::actions::JournalError>> {
    use crate::actions::JournalError;
    let Some(path) = path else {
        return Err(std::sync::Arc::new(JournalError::NoDirectory));
    };
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(crate::audit::attempts(
            text.lines().rev().take(500).map(str::to_string).collect(),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(why) => Err(std::sync::Arc::new(JournalError::Read {
            path: path.to_path_buf(),
            why,
        })),
    }
}

/// Reads `key` from its cluster and tells the loop what `shown` makes of it (its YAML, its
/// runs), or that it could not be read.
fn fetch_object(
    reader: Reader,
    cluster: crate::fleet::ClusterId,
    info: Arc<crate::fleet::ClusterInfo>,
    key: crate::fleet::ObjectKey,
    what: &'static str,
    shown: impl FnOnce(&crate::fleet::ObjectKey, serde_json::Value) -> Fetched + Send + 'static,
    results: mpsc::UnboundedSender<Msg>,
) {
    tokio::spawn(async move {
        let fetched = match reader.object(&info, &key).await {
            Ok(object) => shown(&key, object),
            Err(e) => Fetched::Failed(what, e.to_string()),
        };
        // The loop may have ended meanwhile: nobody to tell.
        let _ = results.send(Msg::Fetched {
            cluster,
            key,
            fetched,
        });
    });
}
