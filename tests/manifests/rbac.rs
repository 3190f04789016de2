//! What the team's MCP server needs on each fleet cluster (`config/deploy/mcp-fleet-rbac.yaml`):
//! the server may impersonate and nothing else; a person gets every verb fluxfleet asks about.

use super::*;

/// The rules of the ClusterRole `name` in `docs`: (API group, resource, verb) triples.
fn granted(docs: &[Value], name: &str) -> BTreeSet<(String, String, String)> {
    let role = docs
        .iter()
        .find(|d| d["kind"] == "ClusterRole" && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no ClusterRole {name}"));
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let mut out = BTreeSet::new();
    for rule in role["rules"].as_array().unwrap() {
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                for verb in strings(&rule["verbs"]) {
                    out.insert((group.clone(), resource.clone(), verb));
                }
            }
        }
    }
    out
}

#[test]
fn the_team_servers_rbac_on_each_cluster_grants_what_fluxfleet_asks_and_no_more() {
    use fluxfleet::fleet::{FluxKind, verbs::Verb};
    let docs = documents(&manifests()["mcp-fleet-rbac.yaml"]);
    let triple = |g: &str, r: &str, v: &str| (g.to_string(), r.to_string(), v.to_string());

    // The server itself: impersonating people and their groups, nothing else.
    let server = granted(&docs, "fluxfleet-mcp-impersonator");
    assert_eq!(
        server,
        BTreeSet::from([
            triple("", "groups", "impersonate"),
            triple("", "users", "impersonate")
        ])
    );
    let account = docs
        .iter()
        .find(|d| d["kind"] == "ServiceAccount")
        .expect("the server's ServiceAccount");
    let binding = docs
        .iter()
        .find(|d| {
            d["kind"] == "ClusterRoleBinding"
                && d["roleRef"]["name"] == "fluxfleet-mcp-impersonator"
        })
        .expect("the impersonator bound");
    assert_eq!(binding["subjects"][0]["kind"], "ServiceAccount");
    assert_eq!(binding["subjects"][0]["name"], account["metadata"]["name"]);
    assert_eq!(
        binding["subjects"][0]["namespace"],
        account["metadata"]["namespace"]
    );

    // A person: every verb fluxfleet asks about (`flux_verbs = "check"`) and the requests it
    // sends as them, on every Flux kind it acts on, and the Event it records.
    let person = granted(&docs, "fluxfleet-flux-actions");
    let verbs = [
        Verb::Suspend,
        Verb::Resume,
        Verb::Reconcile,
        Verb::ReconcileWithSource,
        Verb::Force,
        Verb::Reset,
    ];
    for kind in FluxKind::ALL {
        let needed = verbs.iter().map(|v| v.flux_rbac()).chain(["get", "patch"]);
        for verb in needed {
            let wanted = triple(kind.group(), kind.plural(), verb);
            assert!(person.contains(&wanted), "{kind:?} lacks {wanted:?}");
        }
    }
    assert!(person.contains(&triple("", "events", "create")));
    assert!(
        !person
            .iter()
            .any(|(_, _, v)| ["*", "delete", "update", "impersonate"].contains(&v.as_str())),
        "a person's role only patches: {person:?}"
    );

    // The example binding names a group as the server impersonates it: with its prefix.
    let (_, args) = deployed_args("mcp.yaml");
    let prefix = flag(&args, "--impersonate-prefix").unwrap_or_default();
    assert!(!prefix.is_empty());
    let example = docs
        .iter()
        .find(|d| {
            d["kind"] == "ClusterRoleBinding" && d["roleRef"]["name"] == "fluxfleet-flux-actions"
        })
        .expect("an example binding of the person's role");
    let group = example["subjects"][0]["name"].as_str().unwrap();
    assert!(group.starts_with(prefix), "{group} without {prefix}");
    // The cluster the server runs on is not where this goes.
    let built = std::fs::read_to_string(root().join("config/deploy/kustomization.yaml")).unwrap();
    assert!(!built.contains("mcp-fleet-rbac.yaml"));
}

/// The args of the first container of the first Deployment in `file`.
fn deployed_args(file: &str) -> (Value, Vec<String>) {
    let docs = documents(&manifests()[file]);
    let deployment = docs
        .into_iter()
        .find(|d| d["kind"] == "Deployment")
        .unwrap();
    let args = expanded(&deployment["spec"]["template"]["spec"]["containers"][0]);
    (deployment, args)
}
