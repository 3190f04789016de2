//! A text shared across a fleet, held in one word.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A text shared across a fleet's objects — a revision, a digest, a chart's name — held in one
/// word instead of `Arc<str>`'s two.
///
/// The index keeps one copy of each such text for the whole fleet (`index::names`), so what an
/// object pays is its handle: a [`Rollout`](super::Rollout) holds eleven of them, 200,000 times
/// on a fleet of 10,000 clusters. The handle points at the shared `Box<str>` (one pointer more
/// to follow when read, one allocation more for each distinct text, of which a fleet has a few
/// hundred). It compares, hashes and orders as its text, and is read and written as a string.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Text(Arc<Box<str>>);

/// The empty text.
impl Default for Text {
    fn default() -> Text {
        Text::from("")
    }
}

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// How many hold this copy.
    pub fn holders(&self) -> usize {
        Arc::strong_count(&self.0)
    }

    /// Whether both are the same shared copy (not merely the same words).
    pub fn ptr_eq(a: &Text, b: &Text) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Looked up by its words in a set of shared texts.
impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Text {
        Text(Arc::new(text.into()))
    }
}

impl From<String> for Text {
    fn from(text: String) -> Text {
        Text(Arc::new(text.into_boxed_str()))
    }
}

impl From<Box<str>> for Text {
    fn from(text: Box<str>) -> Text {
        Text(Arc::new(text))
    }
}

impl From<std::borrow::Cow<'_, str>> for Text {
    fn from(text: std::borrow::Cow<'_, str>) -> Text {
        Text(Arc::new(text.into()))
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        Ok(Text::from(String::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_text_is_one_word_and_none_costs_nothing_more() {
        assert_eq!(std::mem::size_of::<Text>(), 8);
        assert_eq!(std::mem::size_of::<Option<Text>>(), 8);
    }

    /// Every Kustomization, HelmRelease and source of a fleet holds a rollout (170,000 on 10,000
    /// clusters of 20 objects): with its eleven texts in two words each it was 232 bytes, served
    /// from the allocator's 256-byte class; in one word, 152, from the 160.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_rollout_fits_the_allocators_160_byte_class() {
        assert!(std::mem::size_of::<crate::fleet::Rollout>() <= 160);
    }

    #[test]
    fn a_text_is_its_words_in_sets_order_and_json() {
        let a = Text::from("main@sha1:4f2a");
        let b = Text::from(String::from("main@sha1:4f2a"));
        assert_eq!(a, b);
        assert!(!Text::ptr_eq(&a, &b));
        assert!(Text::ptr_eq(&a, &a.clone()));
        let set: HashSet<Text> = [a.clone()].into();
        assert!(Text::ptr_eq(set.get("main@sha1:4f2a").unwrap(), &a));
        let mut sorted = vec![Text::from("b"), Text::from("a")];
        sorted.sort();
        assert_eq!(sorted, ["a", "b"]);
        assert_eq!(serde_json::to_string(&a).unwrap(), "\"main@sha1:4f2a\"");
        let back: Text = serde_json::from_str("\"main@sha1:4f2a\"").unwrap();
        assert_eq!(back, a);
        assert_eq!(format!("{a} {a:?}"), "main@sha1:4f2a \"main@sha1:4f2a\"");
    }
}
