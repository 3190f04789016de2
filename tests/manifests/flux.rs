//! The Flux example (`config/deploy/flux/`): valid against Flux's own CRDs, and applying the
//! directory of manifests it names.

use super::*;

/// A Flux object checked against its CRD's schema: every field one the schema has, of its
/// type, the required ones there, enums kept.
fn valid(value: &Value, schema: &Value, at: &str, wrong: &mut Vec<String>) {
    if schema["x-kubernetes-preserve-unknown-fields"] == true {
        return;
    }
    let ty = schema["type"].as_str();
    let fits = match (ty, value) {
        (Some("object"), Value::Object(_))
        | (Some("array"), Value::Array(_))
        | (Some("string"), Value::String(_))
        | (Some("boolean"), Value::Bool(_))
        | (None, _) => true,
        (Some("integer"), Value::Number(n)) => n.is_i64() || n.is_u64(),
        (Some("number"), Value::Number(_)) => true,
        _ => schema["x-kubernetes-int-or-string"] == true,
    };
    if !fits {
        wrong.push(format!("{at}: not a {ty:?}: {value}"));
        return;
    }
    if let Some(choices) = schema["enum"].as_array()
        && !choices.contains(value)
    {
        wrong.push(format!("{at}: {value} is none of {choices:?}"));
    }
    match value {
        Value::Object(fields) => {
            for required in schema["required"].as_array().into_iter().flatten() {
                if !fields.contains_key(required.as_str().unwrap()) {
                    wrong.push(format!("{at}: {required} is required"));
                }
            }
            let properties = schema["properties"].as_object();
            for (k, v) in fields {
                match (
                    properties.and_then(|p| p.get(k)),
                    &schema["additionalProperties"],
                ) {
                    (Some(s), _) => valid(v, s, &format!("{at}.{k}"), wrong),
                    (None, Value::Object(s)) => {
                        valid(v, &Value::Object(s.clone()), &format!("{at}.{k}"), wrong)
                    }
                    (None, _) if properties.is_none() => {}
                    (None, _) => wrong.push(format!("{at}.{k}: a field the kind has not")),
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                valid(item, &schema["items"], &format!("{at}[{i}]"), wrong);
            }
        }
        _ => {}
    }
}

/// Flux's CRDs, as fixtures: (apiVersion, kind) → the schema of that version.
fn flux_schemas() -> BTreeMap<(String, String), Value> {
    let dir = root().join("tests/fixtures/crds");
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for crd in documents(&text) {
            let group = crd["spec"]["group"].as_str().unwrap();
            let kind = crd["spec"]["names"]["kind"].as_str().unwrap();
            for v in crd["spec"]["versions"].as_array().unwrap() {
                let version = v["name"].as_str().unwrap();
                let schema = v["schema"]["openAPIV3Schema"].clone();
                found.insert((format!("{group}/{version}"), kind.to_string()), schema);
            }
        }
    }
    found
}

#[test]
fn the_flux_example_is_valid_for_flux_and_applies_the_manifests() {
    let schemas = flux_schemas();
    let text = std::fs::read_to_string(root().join("config/deploy/flux/fluxfleet.yaml")).unwrap();
    let docs = documents(&text);
    let mut by_kind: BTreeMap<(String, String), &Value> = BTreeMap::new();
    for doc in &docs {
        let key = (
            doc["apiVersion"].as_str().unwrap().to_string(),
            doc["kind"].as_str().unwrap().to_string(),
        );
        let schema = schemas
            .get(&key)
            .unwrap_or_else(|| panic!("a kind Flux does not serve: {key:?}"));
        let mut wrong = Vec::new();
        // Only what a person writes: metadata is the API server's to check.
        let mut written = doc.clone();
        written.as_object_mut().unwrap().remove("metadata");
        valid(&written, schema, &key.1, &mut wrong);
        assert!(wrong.is_empty(), "{}: {wrong:#?}", key.1);
        by_kind.insert(
            (
                key.1.clone(),
                doc["metadata"]["name"].as_str().unwrap().into(),
            ),
            doc,
        );
    }
    // The Kustomization reads the GitRepository beside it, at the release of this source, and
    // applies the directory of the manifests, whose kustomization lists every one of them.
    let ks = by_kind[&("Kustomization".into(), "fluxfleet".into())];
    let source = &ks["spec"]["sourceRef"];
    assert_eq!(source["kind"], "GitRepository");
    let repo = by_kind
        .get(&(
            "GitRepository".into(),
            source["name"].as_str().unwrap().into(),
        ))
        .expect("the Kustomization's source is in the example");
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(repo["spec"]["ref"]["tag"], format!("v{version}"));
    let path = ks["spec"]["path"].as_str().unwrap();
    let dir = root().join(path.trim_start_matches("./"));
    let listed: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap())
            .unwrap();
    let resources: BTreeSet<String> = listed["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect();
    let here: BTreeSet<String> = manifests()
        .into_keys()
        .filter(|f| !ON_EACH_CLUSTER.contains(&f.as_str()))
        .collect();
    assert_eq!(resources, here);
    // The image the manifests name is the one the Kustomization sets.
    let images = ks["spec"]["images"].as_array().unwrap();
    assert_eq!(images.len(), 1);
    for text in manifests().values() {
        for doc in documents(text).iter().filter(|d| d["kind"] == "Deployment") {
            for c in doc["spec"]["template"]["spec"]["containers"]
                .as_array()
                .unwrap()
            {
                let image = c["image"].as_str().unwrap();
                assert_eq!(image.split(':').next().unwrap(), images[0]["name"]);
            }
        }
    }
    assert_eq!(images[0]["newTag"], version);
    // What the GitRepository fetches holds that directory.
    let ignore = repo["spec"]["ignore"].as_str().unwrap();
    assert!(ignore.contains("!/config/deploy/"), "{ignore}");
}
