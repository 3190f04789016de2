//! What every tool that acts or proposes shares, below both: who asks (the person a call's access
//! token names, the MCP client's name for the journal), the action its arguments pick, and the
//! one door (`actions::admit`) on the fleet as this server sees it.

use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::args::Picked;
use super::state::{FleetServer, invalid};
use crate::actions::{self, Admitted, Purpose, Rules};
use crate::fleet::verbs::Verb;

/// A client's name in the journal, at most.
const CLIENT_NAME: usize = 64;

/// The MCP client's name as the journal's `tool`: `mcp:` and at most 64 plain characters.
pub(super) fn client_tool(context: &RequestContext<RoleServer>) -> String {
    let name = context
        .peer
        .peer_info()
        .map(|info| info.client_info.name.clone())
        .unwrap_or_default();
    let plain: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "-_. /@".contains(*c))
        .take(CLIENT_NAME)
        .collect();
    format!("mcp:{}", if plain.is_empty() { "unnamed" } else { &plain })
}

/// The person whose access token the call carries (`mcp --listen --oauth-issuer`).
pub(super) fn principal(context: &RequestContext<RoleServer>) -> Option<&super::oauth::Principal> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<super::oauth::Principal>())
}

/// Who asks: the person their access token names, else the user this server runs as.
pub(super) fn asked_by(context: &RequestContext<RoleServer>) -> String {
    principal(context).map_or_else(crate::audit::local_user, |p| p.username.clone())
}

/// The reconcile asked for: with its source first (`with_source`, as `flux reconcile
/// --with-source`), or the object alone.
pub(super) fn reconciling(with_source: bool) -> Verb {
    if with_source {
        Verb::ReconcileWithSource
    } else {
        Verb::Reconcile
    }
}

impl Picked {
    /// The action `verb` on what these arguments pick, with `reason` (suspend's).
    pub(super) fn request(
        &self,
        verb: Verb,
        reason: Option<String>,
    ) -> Result<actions::Request, ErrorData> {
        Ok(actions::Request {
            verb,
            filter: super::state::filter(&self.scope, self.status.as_deref())?,
            all: self.all,
            reason,
        })
    }
}

/// `ask` through the one door on the fleet as this server sees it: to be sent (writable as
/// `permissions` say), or a preview (None: as if every cluster were writable).
pub(super) async fn admitted(
    fleet: &FleetServer,
    ask: actions::Ask,
    purpose: Purpose,
    permissions: Option<&crate::config::Permissions>,
) -> Result<Admitted, ErrorData> {
    let config = &fleet.state.config;
    let writes_refused = config.writes_refused();
    let rules = Rules {
        writes_refused: writes_refused.as_deref(),
        purpose,
        actions: &config.actions,
        permissions,
    };
    fleet
        .read(|index| actions::admit(index, ask, &rules))
        .await?
        .map_err(invalid)
}
