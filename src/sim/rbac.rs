//! Who may do what on a simulated cluster: who a request is decided for (the credentials, or the
//! person they impersonate), viewers never write nor read secrets, and the faults that take
//! something away from everybody (a Flux kind, creating Events, reading a namespace's Events),
//! answered as kube-apiserver's RBAC answers: 403 with the user, verb, resource and scope; and
//! the reviews that ask it (`kubectl auth whoami`, `kubectl auth can-i`).

use http::StatusCode;
use serde_json::{Value, json};

use super::resources::Res;
use super::status::{ApiError, qualified};
use super::tls::ClientIdentity;
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

/// Who a request is decided for: the credentials' own identity, or — with `Impersonate-User`
/// (and `Impersonate-Group`), allowed to the admin credentials only, as `impersonate` is — the
/// person, with the role this cluster's people give them (none: nothing).
pub fn caller(
    cluster: &Cluster,
    certified: Option<&ClientIdentity>,
    role: Role,
    headers: &http::HeaderMap,
) -> Result<Caller, ApiError> {
    let mut own = Caller::of(role);
    if let Some(who) = certified {
        own.user = who.common_name();
    }
    let Some(user) = headers.get("impersonate-user") else {
        return Ok(own);
    };
    let user = user.to_str().unwrap_or_default().to_string();
    if role != Role::Admin || user.is_empty() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "Forbidden",
            format!(
                "users \"{user}\" is forbidden: User \"{}\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope",
                own.user
            ),
        ));
    }
    let groups: Vec<String> = headers
        .get_all("impersonate-group")
        .iter()
        .filter_map(|g| g.to_str().ok())
        .map(str::to_string)
        .collect();
    let people = &cluster.faults().people;
    let named = |who: &str| {
        people
            .iter()
            .filter(|(p, _)| p == who)
            .map(|(_, r)| *r)
            .min_by_key(|r| *r as u8)
    };
    let roles = std::iter::once(named(&user))
        .chain(groups.iter().map(|g| named(&format!("group:{g}"))))
        .flatten();
    // The widest of the bindings that name them.
    let role = roles.min_by_key(|r| *r as u8).unwrap_or(Role::Nobody);
    let mut groups = groups;
    groups.push("system:authenticated".into());
    Ok(Caller { role, user, groups })
}

/// A SelfSubjectReview: who the request was authenticated as (`kubectl auth whoami`).
pub fn who_am_i(caller: &Caller) -> Value {
    json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "SelfSubjectReview",
        "metadata": {"creationTimestamp": null},
        "status": {"userInfo": {"username": caller.user, "groups": caller.groups}},
    })
}

/// A SelfSubjectAccessReview answered from the cluster's RBAC (`kubectl auth can-i`): the spec
/// as asked, and whether it is allowed.
pub fn can_i(cluster: &Cluster, caller: &Caller, mut asked: Value) -> Value {
    let field = |name: &str| {
        asked
            .pointer(&format!("/spec/resourceAttributes/{name}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let (group, resource, verb, ns) = (
        field("group"),
        field("resource"),
        field("verb"),
        field("namespace"),
    );
    let (allowed, reason) = review(cluster, caller, &group, &resource, &verb, &ns);
    if let Some(doc) = asked.as_object_mut() {
        doc.insert(
            "status".into(),
            json!({"allowed": allowed, "reason": reason}),
        );
        doc.insert("metadata".into(), json!({"creationTimestamp": null}));
    }
    asked
}
