//! The annotations fluxfleet reads and writes on Flux objects, each named once.

use serde_json::Value;

/// Asks the controller to reconcile now; the value is the token it reports back in
/// `status.lastHandledReconcileAt`.
pub const REQUESTED_AT: &str = "reconcile.fluxcd.io/requestedAt";
/// HelmRelease: a one-off install or upgrade, with the same token as `requestedAt`.
pub const FORCE_AT: &str = "reconcile.fluxcd.io/forceAt";
/// HelmRelease: reset the failure counters, with the same token as `requestedAt`.
pub const RESET_AT: &str = "reconcile.fluxcd.io/resetAt";
/// Who suspended the object from fluxfleet.
pub const SUSPENDED_BY: &str = "fluxfleet.dev/suspended-by";
/// Why (`--reason`).
pub const SUSPEND_REASON: &str = "fluxfleet.dev/suspend-reason";
/// The Flux Operator's UI shows who suspended an object from this annotation.
pub const OPERATOR_SUSPENDED_BY: &str = "fluxcd.controlplane.io/suspendedBy";
/// ArtifactGenerator has no `spec.suspend`: this annotation set to `disabled` suspends it.
pub const SOURCE_WATCHER_RECONCILE: &str = "source.extensions.fluxcd.io/reconcile";

/// Every annotation a summary reads; the engine drops the others as soon as it has an object.
pub const SUMMARIZED: [&str; 5] = [
    REQUESTED_AT,
    SOURCE_WATCHER_RECONCILE,
    SUSPENDED_BY,
    SUSPEND_REASON,
    OPERATOR_SUSPENDED_BY,
];

/// The annotation `key` of `object`, when it is a string.
pub fn get<'v>(object: &'v Value, key: &str) -> Option<&'v str> {
    object
        .get("metadata")?
        .get("annotations")?
        .get(key)?
        .as_str()
}
