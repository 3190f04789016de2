//! Who may do what on a simulated cluster: viewers never write nor read secrets, and the faults
//! that take something away from everybody (a Flux kind, creating Events, reading a namespace's
//! Events), answered as kube-apiserver's RBAC answers: 403 with the user, verb, resource and
//! scope.

use http::StatusCode;

use super::resources::Res;
use super::status::{ApiError, qualified};
use super::world::{Cluster, Role};

/// Whether `role` may `verb` `res` named `name` in namespace `ns` (either empty where the
/// request names none).
pub fn authorize(
    cluster: &Cluster,
    role: Role,
    res: Res,
    verb: &str,
    ns: &str,
    name: &str,
) -> Result<(), ApiError> {
    let faults = cluster.faults();
    let kind_forbidden = faults.forbidden.is_some_and(|k| k.as_str() == res.kind());
    let writes = verb == "patch" || verb == "create";
    let events_forbidden = res == Res::Event
        && match verb {
            "create" => faults.forbidden_events,
            _ => faults.hidden_events.as_deref() == Some(ns),
        };
    if kind_forbidden
        || events_forbidden
        || (role == Role::Viewer && (writes || res.is_sensitive()))
    {
        return Err(forbidden(res, role, verb, ns, name));
    }
    Ok(())
}

fn forbidden(res: Res, role: Role, verb: &str, ns: &str, name: &str) -> ApiError {
    let user = match role {
        Role::Admin => "fluxfleet-admin",
        Role::Viewer => "fluxfleet-viewer",
    };
    let what = qualified(res.plural(), res.group());
    let subject = if name.is_empty() {
        what.clone()
    } else {
        format!("{what} \"{name}\"")
    };
    let scope = if ns.is_empty() {
        "at the cluster scope".to_string()
    } else {
        format!("in the namespace \"{ns}\"")
    };
    ApiError::new(
        StatusCode::FORBIDDEN,
        "Forbidden",
        format!(
            "{subject} is forbidden: User \"system:serviceaccount:flux-system:{user}\" cannot {verb} resource \"{}\" in API group \"{}\" {scope}",
            res.plural(),
            res.group()
        ),
    )
    .with_details(res.group(), res.plural(), name)
}
