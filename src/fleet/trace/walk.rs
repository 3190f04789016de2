//! Walking one copy's chain: the object, its controlling owners up to what Flux applied, the
//! appliers its labels name and each one above, and each one's source — over any [`Get`]: a
//! cluster's connection (`k8s`), or the answers captured from real controllers (the tests).
//! Secrets are never asked for.

use std::future::Future;

use serde_json::Value;

use super::resource::{Resource, built_in, flux};
use super::{Applier, Asked, Chain, ChainStop, ClusterChain, MAX_DEPTH, SourceRef, parse};
use crate::fleet::read::ReadError;
use crate::fleet::{FluxKind, ObjectKey};

/// What a walk reads through: a GET of an API path, and where the cluster serves a Flux object
/// (the version it serves).
pub trait Get {
    fn get(&mut self, path: &str) -> impl Future<Output = Result<Value, ReadError>> + Send;
    fn flux_path(&self, key: &ObjectKey) -> String;
}

/// `asked`'s chain, read through `get`.
pub async fn walk(get: &mut impl Get, asked: &Asked) -> Result<ClusterChain, ReadError> {
    let (namespace, name) = (asked.namespace.as_str(), asked.name.as_str());
    let resource = match &asked.resource {
        Some(r) => r.clone(),
        None => discovered(get, &asked.kind).await?,
    };
    let object = match read(get, &resource, namespace, name).await {
        Ok(object) => object,
        Err(ReadError::NotFound) => return Ok(ClusterChain::Absent),
        Err(e) => return Err(e),
    };
    let mut objects = vec![parse::link(&object, &resource.kind)];
    let mut current = object;
    let mut stop = None;
    // Up the owners to the first object Flux applied (or the top).
    while parse::applied_by(&current).is_none() {
        let Some(owner) = parse::owner(&current) else {
            break;
        };
        if objects.len() > MAX_DEPTH {
            stop = Some(ChainStop::TooDeep);
            break;
        }
        let r = owner_resource(get, &owner.api_version, &owner.kind).await?;
        let next = read(get, &r, namespace, &owner.name).await?;
        objects.push(parse::link(&next, &owner.kind));
        current = next;
    }
    let appliers = match stop {
        Some(_) => Vec::new(),
        None => appliers(get, &current, &mut stop).await?,
    };
    Ok(ClusterChain::Found(Chain {
        objects,
        appliers,
        stop,
    }))
}

/// A GET of one object: never a Secret, whatever led here.
async fn read(
    get: &mut impl Get,
    resource: &Resource,
    namespace: &str,
    name: &str,
) -> Result<Value, ReadError> {
    if resource.is_secret() {
        return Err(ReadError::Rejected("fluxfleet never reads Secrets".into()));
    }
    get.get(&resource.path(namespace, name)).await
}

/// The Flux objects that applied `applied`, nearest first, each with its source: up their own
/// labels until one applies itself (a bootstrapped Kustomization), none names another, or
/// [`MAX_DEPTH`].
async fn appliers(
    get: &mut impl Get,
    applied: &Value,
    stop: &mut Option<ChainStop>,
) -> Result<Vec<Applier>, ReadError> {
    let mut out: Vec<Applier> = Vec::new();
    let mut next = parse::applied_by(applied);
    while let Some((kind, namespace, name)) = next.take() {
        if out
            .iter()
            .any(|a| a.kind == kind && a.namespace == namespace && a.name == name)
        {
            break; // It applies itself: the top.
        }
        if out.len() >= MAX_DEPTH {
            *stop = Some(ChainStop::TooDeep);
            break;
        }
        let path = get.flux_path(&ObjectKey::new(kind, &namespace, &name));
        let object = match get.get(&path).await {
            Ok(object) => object,
            Err(ReadError::NotFound) => {
                *stop = Some(ChainStop::AppliedByMissing {
                    kind,
                    namespace,
                    name,
                });
                break;
            }
            Err(why) => return Err(why),
        };
        let mut applier = parse::applier(kind, &object);
        if let Some(source) = applier.source.take() {
            applier.source = Some(sourced(get, source).await?);
        }
        next = parse::applied_by(&object);
        out.push(applier);
    }
    Ok(out)
}

/// A source with its URL, as read: one the cluster does not have said so; a HelmChart (a
/// HelmRelease's `chartRef`) followed to where its chart comes from, as the HelmChart a
/// release's `chart.spec` makes is.
async fn sourced(get: &mut impl Get, mut source: SourceRef) -> Result<SourceRef, ReadError> {
    let Some(kind) = FluxKind::from_kind(&source.kind) else {
        return Ok(source);
    };
    let path = get.flux_path(&ObjectKey::new(kind, &source.namespace, &source.name));
    let found = match get.get(&path).await {
        Ok(found) => found,
        Err(ReadError::NotFound) => {
            source.missing = true;
            return Ok(source);
        }
        Err(why) => return Err(why),
    };
    if kind == FluxKind::HelmChart
        && let Some(mut behind) = parse::chart_source(&found)
    {
        behind.via = Some(format!("HelmChart {}/{}", source.namespace, source.name));
        return Box::pin(sourced(get, behind)).await;
    }
    source.url = parse::source_url(&found);
    Ok(source)
}

/// `kind.group` (or `plural.group`) found in the cluster's discovery: the group's preferred
/// version, then the kind in its resource list.
async fn discovered(get: &mut impl Get, text: &str) -> Result<Resource, ReadError> {
    let (name, group) = text.split_once('.').unwrap_or((text, ""));
    let group_doc = get
        .get(&format!("/apis/{group}"))
        .await
        .map_err(|e| match e {
            ReadError::NotFound => ReadError::NotServed(text.to_string()),
            e => e,
        })?;
    let version = group_doc
        .pointer("/preferredVersion/groupVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| ReadError::NotServed(text.to_string()))?
        .to_string();
    listed(get, &format!("/apis/{version}"), |r| {
        let (kind, plural) = (str_of(r, "kind"), str_of(r, "name"));
        kind.eq_ignore_ascii_case(name) || plural.eq_ignore_ascii_case(name)
    })
    .await?
    .ok_or_else(|| ReadError::NotServed(text.to_string()))
}

fn str_of<'v>(v: &'v Value, field: &str) -> &'v str {
    v.get(field).and_then(Value::as_str).unwrap_or_default()
}

/// The resource of `api` (`/apis/apps/v1`) that `matches`, subresources left out.
async fn listed(
    get: &mut impl Get,
    api: &str,
    matches: impl Fn(&Value) -> bool,
) -> Result<Option<Resource>, ReadError> {
    let doc = get.get(api).await?;
    Ok(doc
        .get("resources")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|r| !str_of(r, "name").contains('/'))
        .find(|r| matches(r))
        .map(|r| Resource {
            kind: str_of(r, "kind").to_string(),
            api: api.to_string(),
            plural: str_of(r, "name").to_string(),
            namespaced: r.get("namespaced").and_then(Value::as_bool).unwrap_or(true),
        }))
}

/// The resource an owner reference points at (`apiVersion`, `kind`).
async fn owner_resource(
    get: &mut impl Get,
    api_version: &str,
    kind: &str,
) -> Result<Resource, ReadError> {
    let api = match api_version {
        "v1" => "/api/v1".to_string(),
        gv => format!("/apis/{gv}"),
    };
    if let Some(r) = built_in(kind, Some(&api)) {
        return Ok(r);
    }
    if let Some(flux_kind) = FluxKind::from_kind(kind)
        && api.starts_with(&format!("/apis/{}/", flux_kind.group()))
    {
        return Ok(flux(flux_kind, api.rsplit('/').next()));
    }
    listed(get, &api, |r| str_of(r, "kind") == kind)
        .await?
        .ok_or_else(|| ReadError::NotServed(format!("{kind} ({api_version})")))
}
