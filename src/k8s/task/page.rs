//! A list page and a watch line read straight into what is kept of them. A page's items are
//! summarised one by one as the parser reaches them, each read as its summary reads it
//! (`fleet::object`): no `serde_json::Value` tree is built, and no page of objects is held
//! beside its summaries. (Read as `Value`s pruned to what summaries read, a page cost a sixth of
//! the engine's time at start-up, most of it building maps and strings only to read a few.)

use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::summarize::summarize;
use crate::fleet::object::{Lax, Object, Text};
use crate::fleet::{FluxKind, FluxSummary};

/// Reads one list page of `kind`, summarising its items.
pub struct ListPage(pub FluxKind);

/// What a list page holds, as kept.
#[derive(Debug, Default)]
pub struct KeptPage {
    /// The items that are objects that can be summarised.
    pub summaries: Vec<FluxSummary>,
    /// Every item, summarised or not: what counts against `engine.max_objects`.
    pub items: usize,
    pub resource_version: Option<String>,
    pub continue_token: Option<String>,
}

/// A watch event: its `type` and its object (a watch's ERROR event carries a `Status`).
#[derive(Deserialize)]
pub struct WatchLine<'a> {
    #[serde(borrow, rename = "type")]
    pub kind: Text<'a>,
    #[serde(borrow, default)]
    pub object: Lax<Object<'a>>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct ListMeta<'a> {
    #[serde(borrow, rename = "resourceVersion")]
    resource_version: Text<'a>,
    #[serde(borrow, rename = "continue")]
    continue_token: Text<'a>,
}

impl<'de> DeserializeSeed<'de> for ListPage {
    type Value = KeptPage;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<KeptPage, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ListPage {
    type Value = KeptPage;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of Kubernetes objects")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KeptPage, A::Error> {
        let mut read = KeptPage::default();
        while let Some(key) = map.next_key::<Text>()? {
            match key.get() {
                Some("items") => map.next_value_seed(Items(self.0, &mut read))?,
                Some("metadata") => {
                    if let Some(meta) = map.next_value::<Lax<ListMeta>>()?.0 {
                        read.resource_version = meta.resource_version.get().map(str::to_owned);
                        read.continue_token = meta.continue_token.get().map(str::to_owned);
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(read)
    }
}

/// A page's `items`, summarised into the page's [`KeptPage`] as they are read.
struct Items<'r>(FluxKind, &'r mut KeptPage);

impl<'de> DeserializeSeed<'de> for Items<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Items<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list's items")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Items(kind, read) = self;
        while let Some(item) = seq.next_element::<Lax<Object>>()? {
            read.items += 1;
            read.summaries.extend(summarize(kind, item.get()));
        }
        Ok(())
    }

    /// `"items": null`, as Kubernetes writes an empty list from some clients.
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
