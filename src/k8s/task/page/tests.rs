use serde::de::DeserializeSeed;
use serde_json::Value;

use super::*;
use crate::fleet::object::{MAX_ITEMS, MAX_TEXT};

/// `items` as one list page, read from its bytes (strings borrowed where they can be).
fn page(kind: FluxKind, items: &[Value]) -> KeptPage {
    let text = serde_json::json!({"kind": "List", "metadata": {"resourceVersion": "7"},
        "items": items})
    .to_string();
    read_slice(kind, text.as_bytes())
}

fn read_slice(kind: FluxKind, bytes: &[u8]) -> KeptPage {
    ListPage(kind)
        .deserialize(&mut serde_json::Deserializer::from_slice(bytes))
        .unwrap()
}

/// The same bytes through a reader: every string is copied, none borrowed.
fn read_reader(kind: FluxKind, bytes: &[u8]) -> KeptPage {
    ListPage(kind)
        .deserialize(&mut serde_json::Deserializer::from_reader(bytes))
        .unwrap()
}

#[test]
fn every_sample_summarises_the_same_read_from_bytes_from_a_reader_or_as_a_value() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/samples");
    let mut compared = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let Ok(object) = serde_saphyr::from_str::<Value>(&text) else {
            continue;
        };
        let Some(kind) = object["kind"].as_str().and_then(FluxKind::from_kind) else {
            continue;
        };
        let whole = FluxSummary::of(kind, &object).unwrap();
        let bytes = serde_json::json!({"items": [object]}).to_string();
        for read in [
            read_slice(kind, bytes.as_bytes()),
            read_reader(kind, bytes.as_bytes()),
        ] {
            assert_eq!(
                read.summaries,
                std::slice::from_ref(&whole),
                "{}",
                path.display()
            );
        }
        compared += 1;
    }
    assert!(compared >= 15, "only {compared} samples");
}

#[test]
fn hostile_objects_summarise_the_same_read_from_bytes_or_as_a_value() {
    let object = crate::hostile::sample("helmrelease-upgrade-failed-rolled-back.yaml");
    let mut both = 0;
    for mutated in crate::hostile::mutations(object.to_string().as_bytes(), 1500) {
        let Ok(whole) = serde_json::from_slice::<Value>(&mutated) else {
            continue;
        };
        // Duplicate keys, which a Value takes the last of, make the typed reading refuse.
        let Ok(typed) = serde_json::from_slice::<Lax<Object>>(&mutated) else {
            continue;
        };
        both += 1;
        assert_eq!(
            summarize(FluxKind::HelmRelease, typed.get()),
            FluxSummary::of(FluxKind::HelmRelease, &whole).ok()
        );
    }
    assert!(both > 100, "only {both} mutations read");
}

#[test]
fn a_page_counts_every_item_and_summarises_the_objects_among_them() {
    let ks = serde_json::json!({"metadata": {"name": "apps", "namespace": "flux-system",
        "managedFields": [{"manager": "x"}], "labels": {"a": "b"},
        "annotations": {"reconcile.fluxcd.io/requestedAt": "t",
            "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
        "spec": {"suspend": true, "patches": [{"patch": "…"}], "postBuild": {}},
        "status": {"inventory": {"entries": [{"id": "a"}, {"id": "b"}]},
            "conditions": [{"type": "Ready", "status": "True"}]}});
    let odd = serde_json::json!({"metadata": "a string", "spec": [1, {"x": 2}],
        "status": null, "code": 410, "message": "too old"});
    let read = page(
        FluxKind::Kustomization,
        &[ks, odd, Value::from(3), Value::from("x")],
    );
    assert_eq!(read.items, 4);
    assert_eq!(read.resource_version.as_deref(), Some("7"));
    assert_eq!(read.continue_token, None);
    let [apps] = &read.summaries[..] else {
        panic!("{:?}", read.summaries)
    };
    assert_eq!(&*apps.key.name, "apps");
    assert!(apps.suspended);
    assert_eq!(apps.requested_at(), Some("t"));
    assert_eq!(apps.inventory(), Some(2));

    let next = read_slice(
        FluxKind::Kustomization,
        br#"{"metadata":{"continue":"c\u00e9","resourceVersion":5},"items":null}"#,
    );
    assert_eq!(next.continue_token.as_deref(), Some("cé"));
    assert_eq!((next.items, next.resource_version), (0, None));
}

#[test]
fn arrays_are_counted_not_stored_and_what_is_kept_is_capped() {
    // A hostile server's inventory of a million entries, an escaped message of 1 MiB, and a
    // dependsOn of a thousand: the count, 32 KiB, 256. (kubectl decodes every entry: an
    // inventory of 32 MiB of `[0,0,…]` took it to 1.1 GB.)
    let entries = vec!["0"; 1_000_000].join(",");
    let message = "é\\n".repeat(256 * 1024);
    let depends: Vec<Value> = (0..1000).map(|i| serde_json::json!({"name": i})).collect();
    let text = format!(
        r#"{{"kind":"Kustomization","metadata":{{"name":"x"}},
           "spec":{{"dependsOn":{}}},
           "status":{{"inventory":{{"entries":[{entries}]}},
             "conditions":[{{"type":"Ready","status":"False","message":"{message}"}}]}}}}"#,
        Value::from(depends)
    );
    let object: Object = serde_json::from_str(&text).unwrap();
    let status = object.status().unwrap();
    assert_eq!(status.inventory.0, Some(1_000_000));
    let kept = object.condition("Ready").unwrap().message.get().unwrap();
    assert!(
        kept.len() <= MAX_TEXT && kept.len() > MAX_TEXT - 3,
        "{}",
        kept.len()
    );
    assert_eq!(object.spec().unwrap().depends_on.0.len(), MAX_ITEMS);
    let summary = summarize(FluxKind::Kustomization, Some(&object)).unwrap();
    assert_eq!(summary.inventory(), Some(1_000_000));
}

#[test]
fn a_watch_line_reads_its_type_and_object_or_status() {
    let line: WatchLine = serde_json::from_slice(
        br#"{"type":"ERROR","object":{"kind":"Status","status":"Failure","code":410,
            "reason":"Expired","message":"too old resource version"}}"#,
    )
    .unwrap();
    assert_eq!(line.kind.get(), Some("ERROR"));
    let status = line.object.get().unwrap();
    assert_eq!(status.code.0, Some(410));
    assert_eq!(status.reason.get(), Some("Expired"));
    assert!(status.status().is_none(), "a Status's status is a string");
    let bookmark: WatchLine = serde_json::from_slice(
        br#"{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"12"}}}"#,
    )
    .unwrap();
    assert_eq!(
        bookmark.object.get().unwrap().resource_version(),
        Some("12")
    );
}
