//! Reading a watched object keeps only what its summary reads. A list page used to be parsed
//! whole into `serde_json::Value`s (managedFields, labels, HelmRelease values, every inventory
//! entry), which was a quarter of the engine's time at start-up, only for `summarize` to drop
//! most of it. Here the parser skips what no summary reads without building it.
//!
//! What is kept must cover every path `FluxSummary::of` reads (with `health_of`, `Rollout::of`
//! and the annotations); the tests summarise every sample both ways and compare.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::fleet::annotations;

/// The most items kept of any array, and entries of any object kept whole: what a summary
/// reads of a list (conditions, history, dependsOn) is far fewer.
pub const MAX_ITEMS: usize = 256;
/// The longest string kept, in bytes (cut at a character boundary): a condition's message is
/// shown in a line or a panel, never 32 MiB of it.
pub const MAX_TEXT: usize = 32 * 1024;

/// What of a JSON value to keep.
enum Keep {
    /// All of it.
    All,
    /// Of an object, these fields (by these rules) and nothing else. Anything that is not an
    /// object is kept whole.
    Fields(&'static [(&'static str, Keep)]),
    /// Of an object, these fields whole.
    Only(&'static [&'static str]),
    /// Of an array, only how long it is: its items are skipped, never stored, and the count
    /// stands in for the array; of an object, its `entries` so (`status.inventory` is either).
    Count,
    /// Of an array, each item by this rule.
    Each(&'static Keep),
}

/// A condition as `health_of` and the summary read it.
static CONDITION: Keep = Keep::Only(&[
    "type",
    "status",
    "reason",
    "message",
    "observedGeneration",
    "lastTransitionTime",
]);

/// A `status.history` entry (HelmRelease, Kustomization) as `Rollout::of` reads it.
static HISTORY: Keep = Keep::Fields(&[
    ("chartName", Keep::All),
    ("chartVersion", Keep::All),
    ("configDigest", Keep::All),
    ("firstDeployed", Keep::All),
    ("firstReconciled", Keep::All),
    ("metadata", Keep::Only(&["revision"])),
]);

/// A Flux object as its summary reads it; also a watch's `Status` (code, reason, message).
static OBJECT: Keep = Keep::Fields(&[
    ("apiVersion", Keep::All),
    ("kind", Keep::All),
    (
        "metadata",
        Keep::Fields(&[
            ("name", Keep::All),
            ("namespace", Keep::All),
            ("generation", Keep::All),
            ("resourceVersion", Keep::All),
            ("deletionTimestamp", Keep::All),
            ("annotations", Keep::Only(&annotations::SUMMARIZED)),
        ]),
    ),
    (
        "spec",
        Keep::Only(&[
            "suspend",
            "type",
            "sourceRef",
            "chartRef",
            "chart",
            "imageRepositoryRef",
            "dependsOn",
        ]),
    ),
    (
        "status",
        Keep::Fields(&[
            ("conditions", Keep::Each(&CONDITION)),
            ("observedGeneration", Keep::All),
            ("lastHandledReconcileAt", Keep::All),
            ("lastAppliedRevision", Keep::All),
            ("lastAttemptedRevision", Keep::All),
            ("lastAppliedOriginRevision", Keep::All),
            ("lastAttemptedConfigDigest", Keep::All),
            ("history", Keep::Each(&HISTORY)),
            ("artifact", Keep::Only(&["revision", "lastUpdateTime"])),
            ("latestRef", Keep::All),
            ("latestImage", Keep::All),
            ("lastScanResult", Keep::All),
            ("lastAutomationRunTime", Keep::All),
            ("inventory", Keep::Count),
        ]),
    ),
    // A watch's ERROR event carries a Status.
    ("code", Keep::All),
    ("reason", Keep::All),
    ("message", Keep::All),
    ("details", Keep::All),
]);

/// An object read as [`OBJECT`] keeps it.
#[derive(Debug)]
pub struct Slim(pub Value);

impl<'de> serde::Deserialize<'de> for Slim {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Slim, D::Error> {
        Pruned(&OBJECT).deserialize(d).map(Slim)
    }
}

struct Pruned(&'static Keep);

impl<'de> DeserializeSeed<'de> for Pruned {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(Pruning(self.0))
    }
}

/// Which rule a key of an object matches, read without allocating the key.
struct Key(&'static Keep);

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Option<(&'static str, &'static Keep)>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Option<(&'static str, &'static Keep)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
        Ok(match self.0 {
            Keep::Fields(fields) => fields
                .iter()
                .find(|(name, _)| *name == key)
                .map(|(name, keep)| (*name, keep)),
            Keep::Only(names) => names
                .iter()
                .find(|name| **name == key)
                .map(|name| (*name, &Keep::All)),
            Keep::Count => (key == "entries").then_some(("entries", &Keep::Count)),
            Keep::All | Keep::Each(_) => None,
        })
    }
}

/// Builds the kept part of a value: objects by their rule, anything else whole.
struct Pruning(&'static Keep);

impl<'de> Visitor<'de> for Pruning {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        if let Keep::All = self.0 {
            let mut map = Map::new();
            while let Some(key) = access.next_key::<String>()? {
                if map.len() < MAX_ITEMS {
                    let value = access.next_value_seed(Pruned(&Keep::All))?;
                    map.insert(cut(key), value);
                } else {
                    access.next_value::<IgnoredAny>()?;
                }
            }
            return Ok(Value::Object(map));
        }
        // Room for what is usually kept: growing a map rehashes it.
        let mut map = Map::with_capacity(match self.0 {
            Keep::Fields(fields) => fields.len().min(8),
            Keep::Only(names) => names.len().min(8),
            Keep::All | Keep::Count | Keep::Each(_) => 0,
        });
        while let Some(found) = access.next_key_seed(Key(self.0))? {
            match found {
                Some((name, keep)) => {
                    let value = access.next_value_seed(Pruned(keep))?;
                    map.insert(name.to_string(), value);
                }
                None => {
                    access.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(map))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        if let Keep::Count = self.0 {
            let mut count = 0u64;
            while access.next_element::<IgnoredAny>()?.is_some() {
                count += 1;
            }
            return Ok(Value::from(count));
        }
        let keep = match self.0 {
            Keep::Each(keep) => *keep,
            _ => &Keep::All,
        };
        let mut items = Vec::with_capacity(access.size_hint().unwrap_or(0).min(64));
        while items.len() < MAX_ITEMS {
            match access.next_element_seed(Pruned(keep))? {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
        while access.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Value::Array(items))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v[..boundary(v, MAX_TEXT)].to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(cut(v)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// `text` cut to at most [`MAX_TEXT`] bytes.
fn cut(mut text: String) -> String {
    text.truncate(boundary(&text, MAX_TEXT));
    text
}

/// The longest prefix of `text` within `max` bytes that ends at a character boundary.
fn boundary(text: &str, max: usize) -> usize {
    if text.len() <= max {
        return text.len();
    }
    (0..=max)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::FluxKind;
    use crate::k8s::task::summarize::summarize;

    fn slim(object: &Value) -> Value {
        serde_json::from_str::<Slim>(&object.to_string()).unwrap().0
    }

    #[test]
    fn every_sample_summarises_the_same_read_slim_or_whole() {
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
            let whole = summarize(kind, object.clone());
            assert!(whole.is_some(), "{}", path.display());
            assert_eq!(summarize(kind, slim(&object)), whole, "{}", path.display());
            compared += 1;
        }
        assert!(compared >= 15, "only {compared} samples");
    }

    #[test]
    fn hostile_objects_summarise_the_same_read_slim_or_whole() {
        let object = crate::hostile::sample("helmrelease-upgrade-failed-rolled-back.yaml");
        let mut both = 0;
        for mutated in crate::hostile::mutations(object.to_string().as_bytes(), 1500) {
            let (Ok(whole), Ok(Slim(slim))) = (
                serde_json::from_slice::<Value>(&mutated),
                serde_json::from_slice::<Slim>(&mutated),
            ) else {
                continue;
            };
            both += 1;
            assert_eq!(
                summarize(FluxKind::HelmRelease, slim),
                summarize(FluxKind::HelmRelease, whole)
            );
        }
        assert!(both > 100, "only {both} mutations read");
    }

    #[test]
    fn what_no_summary_reads_is_not_kept_and_odd_shapes_are_kept_as_they_are() {
        let object = serde_json::json!({
            "kind": "Kustomization",
            "metadata": {"name": "apps", "managedFields": [{"manager": "x"}],
                "labels": {"a": "b"}, "annotations": {"reconcile.fluxcd.io/requestedAt": "t",
                "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "spec": {"suspend": true, "patches": [{"patch": "…"}], "postBuild": {}},
            "status": {"inventory": {"entries": [{"id": "a"}, {"id": "b"}]},
                "conditions": [{"type": "Ready", "status": "True"}]},
        });
        assert_eq!(
            slim(&object),
            serde_json::json!({
                "kind": "Kustomization",
                "metadata": {"name": "apps",
                    "annotations": {"reconcile.fluxcd.io/requestedAt": "t"}},
                "spec": {"suspend": true},
                "status": {"inventory": {"entries": 2},
                    "conditions": [{"type": "Ready", "status": "True"}]},
            })
        );
        let odd = serde_json::json!({"metadata": "a string", "spec": [1, {"x": 2}],
            "status": null, "code": 410, "message": "too old"});
        assert_eq!(slim(&odd), odd);
        assert_eq!(slim(&serde_json::json!([1, 2])), serde_json::json!([1, 2]));
    }

    #[test]
    fn counted_arrays_are_not_stored_and_what_is_kept_is_capped() {
        // A hostile server's inventory of a million entries, a message of 1 MiB, and a
        // dependsOn of a thousand: the count, 32 KiB, 256. (kubectl decodes every entry: an
        // inventory of 32 MiB of `[0,0,…]` took it to 1.1 GB.)
        let entries = vec!["0"; 1_000_000].join(",");
        let message = "é".repeat(512 * 1024);
        let depends: Vec<Value> = (0..1000).map(|i| serde_json::json!({"name": i})).collect();
        let text = format!(
            r#"{{"kind":"Kustomization","metadata":{{"name":"x"}},
               "spec":{{"dependsOn":{}}},
               "status":{{"inventory":{{"entries":[{entries}]}},
                 "conditions":[{{"type":"Ready","status":"False","message":"{message}"}}]}}}}"#,
            Value::from(depends)
        );
        let Slim(slim) = serde_json::from_str(&text).unwrap();
        assert_eq!(slim["status"]["inventory"]["entries"], 1_000_000);
        let kept = slim["status"]["conditions"][0]["message"].as_str().unwrap();
        assert!(
            kept.len() <= MAX_TEXT && kept.len() > MAX_TEXT - 2,
            "{}",
            kept.len()
        );
        assert_eq!(
            slim["spec"]["dependsOn"].as_array().unwrap().len(),
            MAX_ITEMS
        );
        let summary = summarize(FluxKind::Kustomization, slim).unwrap();
        assert_eq!(summary.inventory, Some(1_000_000));
    }
}
