//! One task per cluster: credentials → client → discovery (`connect.rs`) → watches (`watch.rs`),
//! or its FluxReport alone (`summary_tier.rs`), turning
//! everything into [`Event`]s — object summaries and the cluster's connection state. A failure
//! stays inside its cluster: it is reported, backed off and retried, and nothing else waits.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::connect::TaskShared;
use super::reporter::Reporter;
use super::watch::watched;
use crate::fleet::{Connection, Phase};
use crate::inventory::ClusterSpec;
use crate::source::Closed;

/// Runs until `cancel` fires or the events receiver is dropped.
///
/// The spec is shared before the task's future is made: a future keeps room for what it was
/// given (a spec is 232 bytes) for its whole life, in each of ten thousand tasks.
pub fn run(
    spec: ClusterSpec,
    shared: Arc<TaskShared>,
    cancel: CancellationToken,
) -> impl Future<Output = ()> + Send {
    // Held, not copied: a plugin the user runs on this cluster gets its kubeconfig from here.
    let spec = Arc::new(spec);
    async move {
        let reporter = Reporter::new(&spec, shared.events.clone());
        let _held = shared.clients.hold(&spec);
        tokio::select! {
            _ = cancel.cancelled() => {}
            _ = lifecycle(reporter, &spec, &shared) => {}
        }
    }
}

async fn lifecycle(
    mut reporter: Reporter,
    spec: &ClusterSpec,
    shared: &Arc<TaskShared>,
) -> Result<(), Closed> {
    // Not provisioned (or paused, deleting, failed) in Cluster API: say so, do not connect.
    if let Some(found) = &spec.discovered
        && !found.lifecycle.connectable()
    {
        use crate::inventory::capi::Lifecycle;
        let (phase, message) = match &found.lifecycle {
            Lifecycle::Provisioning => (
                Phase::Provisioning,
                "Cluster API is still provisioning it".to_string(),
            ),
            Lifecycle::Paused => (Phase::Paused, "paused in Cluster API".to_string()),
            Lifecycle::Deleting => (Phase::Deleting, "Cluster API is deleting it".to_string()),
            Lifecycle::Failed(why) => (Phase::ProvisionFailed, format!("Cluster API: {why}")),
            Lifecycle::Provisioned => (Phase::Connecting, String::new()),
        };
        let mut state = Connection::new(phase);
        state.error = Some(message.into());
        reporter.connection(state).await?;
        std::future::pending::<()>().await;
    }
    // Boxed: a task waits in one of the two, and a summarized one should not carry the other's
    // state (thousands of idle tasks).
    if shared.summary {
        let opened = shared.warm.register(reporter.key());
        return Box::pin(super::summary_tier::summarized(
            &mut reporter,
            spec,
            shared,
            opened,
        ))
        .await;
    }
    Box::pin(watched(&mut reporter, spec, shared)).await
}
