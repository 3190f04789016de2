//! JSON merge patch (RFC 7386), as the API server applies `application/merge-patch+json`.

use serde_json::Value;

/// Applies `patch` to `target` in place: objects merge key by key, `null` removes a key, anything
/// else replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch_map) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Default::default());
    }
    if let Value::Object(map) = target {
        for (key, value) in patch_map {
            if value.is_null() {
                map.remove(key);
            } else {
                merge_patch(map.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rfc7386_examples() {
        let mut doc = json!({"a": "b", "c": {"d": "e", "f": "g"}});
        merge_patch(&mut doc, &json!({"a": "z", "c": {"f": null}}));
        assert_eq!(doc, json!({"a": "z", "c": {"d": "e"}}));

        let mut doc = json!({"spec": {"suspend": true, "interval": "1m"}});
        merge_patch(&mut doc, &json!({"spec": {"suspend": null}}));
        assert_eq!(doc, json!({"spec": {"interval": "1m"}}));

        let mut doc = json!({"a": [1, 2]});
        merge_patch(&mut doc, &json!({"a": [3], "b": {"c": null}}));
        assert_eq!(doc, json!({"a": [3], "b": {}}));
    }
}
