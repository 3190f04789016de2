//! Parsing what a request asks for: query parameters, and the filter (resource, namespace,
//! selectors, version) that a list or watch applies.

use std::collections::HashMap;

use bytes::Bytes;
use serde_json::Value;

use super::capi;
use super::resources::{Res, api_version};
use super::selector::{FieldSelector, LabelSelector};
use super::status::ApiError;
use super::store::Object;

/// Decodes `%XX` escapes and `+` (a space in query strings, as Go's `url.ParseQuery` reads them).
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn parse_query(query: Option<&str>) -> HashMap<String, String> {
    query
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (percent_decode(k), percent_decode(v)),
            None => (percent_decode(p), String::new()),
        })
        .collect()
}

pub fn flag(q: &HashMap<String, String>, key: &str) -> bool {
    q.get(key)
        .is_some_and(|v| v == "true" || v == "1" || v.is_empty())
}

/// Which objects a list or watch returns, and in which version.
pub struct Filter {
    pub res: Res,
    pub namespace: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
    /// `group/version` the client asked for.
    pub api_version: String,
    pub kind: &'static str,
    storage_api_version: String,
    prefix: Vec<u8>,
}

impl Filter {
    pub fn new(
        res: Res,
        version: &str,
        storage_version: &str,
        namespace: Option<String>,
        q: &HashMap<String, String>,
    ) -> Result<Filter, ApiError> {
        let labels = LabelSelector::parse(q.get("labelSelector").map_or("", String::as_str))?;
        let fields = FieldSelector::parse(
            q.get("fieldSelector").map_or("", String::as_str),
            res.field_selectors(),
        )?;
        let storage_api_version = api_version(res.group(), storage_version);
        Ok(Filter {
            res,
            namespace,
            labels,
            fields,
            api_version: api_version(res.group(), version),
            kind: res.kind(),
            prefix: format!("{{\"apiVersion\":\"{storage_api_version}\"").into_bytes(),
            storage_api_version,
        })
    }

    pub fn matches(&self, obj: &Object) -> bool {
        if obj.res != self.res
            || self
                .namespace
                .as_ref()
                .is_some_and(|ns| *ns != obj.namespace)
        {
            return false;
        }
        if !self.labels.is_empty()
            && !self
                .labels
                .matches(obj.labels().iter().map(|(k, v)| (k.as_str(), v.as_str())))
        {
            return false;
        }
        if self.fields.is_empty() {
            return true;
        }
        if self.fields.only_metadata() {
            return self.fields.matches(|f| match f {
                "metadata.name" => Some(obj.name.clone()),
                "metadata.namespace" => Some(obj.namespace.clone()),
                _ => None,
            });
        }
        let value = obj.value();
        self.fields.matches(|f| {
            let path = match f {
                "source" => "/source/component".to_string(),
                other => format!("/{}", other.replace('.', "/")),
            };
            value.pointer(&path).map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        })
    }

    /// The object's JSON in the requested version.
    pub fn render(&self, obj: &Object) -> Bytes {
        if self.api_version == self.storage_api_version {
            return obj.json.clone();
        }
        if self.res == Res::CapiCluster {
            return Bytes::from(capi::to_v1beta1(obj.value()).to_string());
        }
        // Flux CRDs convert with strategy None: only apiVersion changes.
        if obj.json.starts_with(&self.prefix) {
            let mut out = Vec::with_capacity(obj.json.len() + 8);
            out.extend_from_slice(format!("{{\"apiVersion\":\"{}\"", self.api_version).as_bytes());
            out.extend_from_slice(&obj.json[self.prefix.len()..]);
            return Bytes::from(out);
        }
        let mut v = obj.value();
        v["apiVersion"] = Value::String(self.api_version.clone());
        Bytes::from(v.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_decoding() {
        let q = parse_query(Some("labelSelector=app%3Dweb%2Ctier+in+%28a%29&watch=1&x"));
        assert_eq!(q["labelSelector"], "app=web,tier in (a)");
        assert!(flag(&q, "watch"));
        assert!(flag(&q, "x"));
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }
}
