//! Who may do what on a simulated cluster: viewers never write nor read secrets, and the faults
//! that take something away from everybody (a Flux kind, creating Events, reading a namespace's
//! Events), answered as kube-apiserver's RBAC answers: 403 with the user, verb, resource and
//! scope.

use http::StatusCode;

use super::resources::Res;
use super::status::{ApiError, qualified};
use super::world::{Caller, Cluster, Role};

/// Whether `role` may `verb` `res` named `name` in namespace `ns` (either empty where the
/// request names none).
pub fn authorize(
    cluster: &Cluster,
    caller: &Caller,
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
        || (caller.role == Role::Viewer && (writes || res.is_sensitive()))
        || caller.role == Role::Nobody
    {
        return Err(forbidden(res, &caller.user, verb, ns, name));
    }
    Ok(())
}

/// Flux's custom verbs, which only access reviews ask about (the Flux web UI's actions).
const FLUX_VERBS: [&str; 3] = ["suspend", "resume", "reconcile"];

/// A `SelfSubjectAccessReview`'s answer for `caller`: whether they may `verb` the resource
/// `group`/`plural`, and the reason kube-apiserver's RBAC authorizer gives (a binding when
/// allowed; nothing when denied).
pub fn review(
    cluster: &Cluster,
    caller: &Caller,
    group: &str,
    plural: &str,
    verb: &str,
    ns: &str,
) -> (bool, String) {
    let role = caller.role;
    let res = cluster
        .served
        .iter()
        .map(|s| s.res)
        .find(|r| r.group() == group && r.plural() == plural);
    let allowed = match res {
        Some(Res::Flux(kind)) if FLUX_VERBS.contains(&verb) => {
            let denied = cluster
                .faults()
                .denied_verb
                .as_ref()
                .is_some_and(|(v, k)| v == verb && k.is_none_or(|k| k == kind));
            role == Role::Admin && !denied
        }
        // A custom verb on anything else: no Role of the simulator names it.
        Some(_) if FLUX_VERBS.contains(&verb) => false,
        Some(res) => authorize(cluster, caller, res, verb, ns, "").is_ok(),
        None => role == Role::Admin,
    };
    let reason = match allowed {
        true => format!(
            "RBAC: allowed by ClusterRoleBinding \"fluxfleet-{0}\" of ClusterRole \"fluxfleet-{0}\" to User \"{1}\"",
            role.name(),
            caller.user
        ),
        false => String::new(),
    };
    (allowed, reason)
}

fn forbidden(res: Res, user: &str, verb: &str, ns: &str, name: &str) -> ApiError {
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
            "{subject} is forbidden: User \"{user}\" cannot {verb} resource \"{}\" in API group \"{}\" {scope}",
            res.plural(),
            res.group()
        ),
    )
    .with_details(res.group(), res.plural(), name)
}
