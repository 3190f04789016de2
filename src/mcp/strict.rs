//! Tool arguments parsed strictly: an argument a tool does not take is refused by name, with the
//! nearest one it does take, before the tool runs — never dropped. serde's
//! `deny_unknown_fields` does not work through `#[serde(flatten)]`, which every tool's scope and
//! page use, so the names a tool takes are read from the schema the tool advertises: what it
//! says it takes and what it accepts cannot drift apart, and the schema says
//! `additionalProperties: false` to the client too.

use std::borrow::Cow;
use std::collections::BTreeSet;

use rmcp::schemars::{self, JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A tool's arguments `T`, refused whole when they hold a name `T` does not take.
#[derive(Debug, Default, Serialize)]
#[serde(transparent)]
pub struct Strict<T>(pub T);

/// An argument the tool does not take: the call is to be fixed, nothing was done.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown argument `{name}`{} (this tool takes {}; nothing was done)", nearest(.suggestion), listed(.takes))]
pub struct Unknown {
    pub name: String,
    /// The argument it most likely meant.
    pub suggestion: Option<String>,
    /// Every argument the tool takes.
    pub takes: Vec<String>,
}

fn nearest(suggestion: &Option<String>) -> String {
    match suggestion {
        Some(name) => format!("; did you mean `{name}`?"),
        None => String::new(),
    }
}

fn listed(takes: &[String]) -> String {
    match takes {
        [] => "no arguments".into(),
        _ => takes
            .iter()
            .map(|t| format!("`{t}`"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The names `T`'s schema gives its properties: what the tool takes.
pub fn takes<T: JsonSchema>() -> BTreeSet<String> {
    let schema = schemars::schema_for!(T);
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

/// The first of `given` that is not in `takes`, refused with the nearest name taken.
pub fn check<'a>(
    given: impl IntoIterator<Item = &'a String>,
    takes: &BTreeSet<String>,
) -> Result<(), Unknown> {
    let Some(name) = given.into_iter().find(|name| !takes.contains(*name)) else {
        return Ok(());
    };
    Err(Unknown {
        name: name.clone(),
        suggestion: suggestion(name, takes),
        takes: takes.iter().cloned().collect(),
    })
}

/// The name in `takes` closest to `name` — a plural, a case or a separator apart, a letter or
/// two wrong — if any is close enough to be what was meant.
fn suggestion(name: &str, takes: &BTreeSet<String>) -> Option<String> {
    let plain = |s: &str| s.to_ascii_lowercase().replace(['-', '_'], "");
    let asked = plain(name);
    takes
        .iter()
        .map(|t| (t, strsim::levenshtein(&asked, &plain(t))))
        .filter(|(t, distance)| *distance <= (t.len() / 3).max(1))
        .min_by_key(|(_, distance)| *distance)
        .map(|(t, _)| t.clone())
}

impl<'de, T: DeserializeOwned + JsonSchema> Deserialize<'de> for Strict<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let given = Map::<String, Value>::deserialize(deserializer)?;
        check(given.keys(), &takes::<T>()).map_err(D::Error::custom)?;
        serde_json::from_value(Value::Object(given))
            .map(Strict)
            .map_err(D::Error::custom)
    }
}

impl<T: JsonSchema> JsonSchema for Strict<T> {
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = T::json_schema(generator);
        schema.insert("additionalProperties".into(), Value::Bool(false));
        schema
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, Deserialize, JsonSchema)]
    struct Inner {
        workspace: Option<String>,
        #[serde(default)]
        clusters: Vec<String>,
    }

    #[derive(Debug, Default, Deserialize, JsonSchema)]
    struct Args {
        #[serde(flatten)]
        inner: Inner,
        with_source: Option<bool>,
        limit: Option<u32>,
    }

    fn parsed(value: Value) -> Result<Args, serde_json::Error> {
        serde_json::from_value::<Strict<Args>>(value).map(|s| s.0)
    }

    #[test]
    fn flattened_arguments_are_taken_and_an_unknown_one_is_refused_by_name() {
        let args = parsed(serde_json::json!({
            "workspace": "dev", "clusters": ["*-dev-*"], "limit": 3, "with_source": true
        }));
        let args = args.unwrap_or_default();
        assert_eq!(args.inner.workspace.as_deref(), Some("dev"));
        assert_eq!(args.inner.clusters, ["*-dev-*"]);
        assert_eq!((args.limit, args.with_source), (Some(3), Some(true)));
        let refused = parsed(serde_json::json!({ "cluster": ["*-dev-*"] }));
        assert_eq!(
            refused.err().map(|e| e.to_string()).as_deref(),
            Some(
                "unknown argument `cluster`; did you mean `clusters`? (this tool takes \
                 `clusters`, `limit`, `with_source`, `workspace`; nothing was done)"
            )
        );
    }

    #[test]
    fn the_nearest_name_is_offered_only_when_it_is_near() {
        let takes = takes::<Args>();
        let offered = |name: &str| check([&name.to_string()], &takes).err()?.suggestion;
        assert_eq!(offered("cluster").as_deref(), Some("clusters"));
        assert_eq!(offered("withSource").as_deref(), Some("with_source"));
        assert_eq!(offered("worksapce").as_deref(), Some("workspace"));
        assert_eq!(offered("Limit").as_deref(), Some("limit"));
        assert_eq!(offered("namespace"), None);
        assert_eq!(offered("limits").as_deref(), Some("limit"));
        assert_eq!(offered(""), None);
        assert!(check([&"limit".to_string()], &takes).is_ok());
    }

    #[test]
    fn the_schema_refuses_what_it_does_not_name() {
        let schema = schemars::schema_for!(Strict<Args>);
        assert_eq!(
            schema.get("additionalProperties"),
            Some(&Value::Bool(false))
        );
        assert_eq!(
            takes::<Strict<Args>>(),
            takes::<Args>(),
            "the flattened names stay properties"
        );
    }

    #[test]
    fn wrong_types_and_non_objects_are_refused_too() {
        assert!(parsed(serde_json::json!({ "clusters": "prod-*" })).is_err());
        assert!(parsed(serde_json::json!(["clusters"])).is_err());
    }
}
