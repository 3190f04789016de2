//! What `get` and the actions select by: the scope ([`Scope`], the one type every front door
//! reads) and a status.

use clap::Args;

use super::usage::Usage;
use crate::export::{Filter, StatusFilter};
use crate::fleet::scope::Scope;

/// The selectors `get` and the actions share: the scope and a status.
#[derive(Debug, Args)]
pub struct Selectors {
    #[command(flatten)]
    pub scope: Scope,
    /// failing, stalled, suspended, progressing, ready, not-ready (or any other health).
    #[arg(long, value_parser = StatusFilter::parse)]
    pub status: Option<StatusFilter>,
}

impl Selectors {
    pub fn filter(&self) -> Result<Filter, Usage> {
        Ok(self.scope.filter(self.status)?)
    }
}
