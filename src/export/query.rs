//! What `get` was asked.

use std::time::Duration;

use super::{Filter, StatusFilter};
use crate::headless::Output;
use crate::session::resolve::Sources;

/// What `get` was asked.
#[derive(Clone, Debug)]
pub struct Query {
    pub sources: Sources,
    pub filter: Filter,
    /// `get all`: every Flux kind each cluster serves is read, as `flux get all` reads them
    /// (the watched kinds otherwise, or the one kind named).
    pub every_kind: bool,
    pub output: Output,
    pub summary: bool,
    /// The selected not-ready objects by their root causes (`--root-causes`).
    pub root_causes: bool,
    pub timeout: Duration,
    pub watch: bool,
    pub fail_on: Option<StatusFilter>,
    /// With `--nats`: the history of this last while instead of the objects.
    pub since: Option<Duration>,
}
