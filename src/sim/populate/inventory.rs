//! The Flux objects a Kustomization applies, in its inventory as kustomize-controller keeps it:
//! every Flux object labelled with its name and namespace (`kustomize.toolkit.fluxcd.io/name`),
//! by `<namespace>_<name>_<group>_<kind>` and the version applied. What `flux tree ks` walks.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::resources::Res;
use crate::store::Store;

const NAME: &str = "kustomize.toolkit.fluxcd.io/name";
const NAMESPACE: &str = "kustomize.toolkit.fluxcd.io/namespace";

/// Adds to every Kustomization of `store` the Flux objects labelled as applied by it.
pub fn add_applied(store: &mut Store) {
    let mut applied: BTreeMap<(String, String), Vec<Value>> = BTreeMap::new();
    for object in store.all().filter(|o| matches!(o.res, Res::Flux(_))) {
        let value = object.value();
        let label = |key: &str| {
            value["metadata"]["labels"][key]
                .as_str()
                .map(str::to_string)
        };
        let (Some(by), Some(by_ns)) = (label(NAME), label(NAMESPACE)) else {
            continue;
        };
        let api = value["apiVersion"].as_str().unwrap_or_default();
        let Some((group, version)) = api.split_once('/') else {
            continue;
        };
        let kind = object.res.kind();
        let id = format!("{}_{}_{group}_{kind}", object.namespace, object.name);
        applied
            .entry((by_ns, by))
            .or_default()
            .push(json!({"id": id, "v": version}));
    }
    let kustomizations: Vec<_> = store
        .list(Res::Flux(crate::facts::FluxKind::Kustomization), None)
        .cloned()
        .collect();
    for ks in kustomizations {
        let Some(more) = applied.remove(&(ks.namespace.clone(), ks.name.clone())) else {
            continue;
        };
        let mut value = ks.value();
        let Some(entries) = value["status"]["inventory"]["entries"].as_array_mut() else {
            continue;
        };
        entries.extend(more);
        entries.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
        store.put(ks.res, value, ks.intent);
    }
}
