//! A text shared across a fleet, held in one word.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

use arcstr::ArcStr;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A text shared across a fleet's objects and reports — a name, a revision, a condition's
/// message — held in one word instead of `Arc<str>`'s two.
///
/// The index keeps one copy of each such text for the whole fleet (`index::names`), so what an
/// object pays is its handle: a key holds two, a summary five, a [`Rollout`](super::Rollout)
/// eleven, 200,000 times on a fleet of 10,000 clusters of 20 objects. The copy is one allocation
/// (`arcstr::ArcStr`: its count and length before the words), as an `Arc<str>`'s is; the handle
/// is half as wide. It compares, hashes and orders as its text, and is read and written as a
/// string.
///
/// Before, it was an `Arc<Box<str>>` (two allocations), which cost more than it saved for a text
/// few share: a bus reader of 100,000 clusters held 56 MiB more with its reports' texts so
/// (docs/performance.md, "The second pass"). One allocation costs what `Arc<str>` cost.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SharedText(ArcStr);

/// The empty text.
impl Default for SharedText {
    fn default() -> SharedText {
        SharedText(ArcStr::new())
    }
}

impl SharedText {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// How many hold this copy.
    pub fn holders(&self) -> usize {
        // None only for a text compiled into the program (`arcstr::literal!`), never made here.
        ArcStr::strong_count(&self.0).unwrap_or(usize::MAX)
    }

    /// Whether both are the same shared copy (not merely the same words).
    pub fn ptr_eq(a: &SharedText, b: &SharedText) -> bool {
        ArcStr::ptr_eq(&a.0, &b.0)
    }
}

impl Deref for SharedText {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedText {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Looked up by its words in a set of shared texts.
impl Borrow<str> for SharedText {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for SharedText {
    fn from(text: &str) -> SharedText {
        SharedText(ArcStr::from(text))
    }
}

impl From<String> for SharedText {
    fn from(text: String) -> SharedText {
        SharedText(ArcStr::from(text))
    }
}

impl From<&String> for SharedText {
    fn from(text: &String) -> SharedText {
        SharedText(ArcStr::from(text.as_str()))
    }
}

impl From<std::borrow::Cow<'_, str>> for SharedText {
    fn from(text: std::borrow::Cow<'_, str>) -> SharedText {
        SharedText(ArcStr::from(&*text))
    }
}

impl PartialEq<str> for SharedText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SharedText {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Display for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl fmt::Debug for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for SharedText {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self)
    }
}

impl<'de> Deserialize<'de> for SharedText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SharedText, D::Error> {
        struct Words;
        impl serde::de::Visitor<'_> for Words {
            type Value = SharedText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            // Read where it lies (most texts have nothing escaped): one copy, into its allocation.
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<SharedText, E> {
                Ok(SharedText::read(text))
            }
            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<SharedText, E> {
                Ok(SharedText::read(&text))
            }
        }
        d.deserialize_str(Words)
    }
}

impl SharedText {
    /// A text as it is read (from a cluster, from the bus): the copy this thread read lately
    /// when there is one. A fleet's objects repeat their names, revisions and messages, and a
    /// text read as a new copy each time is a small allocation that the index frees at once for
    /// its shared copy — 9 million on a bus reader of 100,000 clusters, whose freed room the
    /// allocator kept: 100 MiB of its peak (docs/performance.md, "The third pass"). The copies
    /// are let go once nothing else holds them (swept as the index's texts are, when the set
    /// has doubled since the last sweep); texts longer than [`READ_LONGEST`] are not kept.
    pub fn read(text: &str) -> SharedText {
        read(text)
    }
}

/// The longest text [`SharedText::read`] keeps to hand out again: longer ones rarely repeat.
pub const READ_LONGEST: usize = 256;

thread_local! {
    /// The texts this thread read lately, and how many were kept after the last sweep.
    static READ: std::cell::RefCell<(std::collections::HashSet<SharedText>, usize)> =
        Default::default();
}

fn read(text: &str) -> SharedText {
    if text.len() > READ_LONGEST {
        return SharedText::from(text);
    }
    READ.with_borrow_mut(|(set, swept)| {
        if let Some(shared) = set.get(text) {
            return shared.clone();
        }
        if set.len() >= 2 * (*swept).max(1024) {
            set.retain(|t| t.holders() > 1);
            *swept = set.len();
        }
        let shared = SharedText::from(text);
        set.insert(shared.clone());
        shared
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_text_is_one_word_and_none_costs_nothing_more() {
        assert_eq!(std::mem::size_of::<SharedText>(), 8);
        assert_eq!(std::mem::size_of::<Option<SharedText>>(), 8);
    }

    /// Every Kustomization, HelmRelease and source of a fleet holds a rollout (170,000 on 10,000
    /// clusters of 20 objects): with its eleven texts in two words each it was 232 bytes, served
    /// from the allocator's 256-byte class; in one word, 152, from the 160.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_rollout_fits_the_allocators_160_byte_class() {
        assert!(std::mem::size_of::<crate::fleet::Rollout>() <= 160);
    }

    /// A text read again on one thread is the copy read before, while someone holds it; one
    /// nobody else holds is let go at a sweep; a long one is never kept.
    #[test]
    fn a_text_read_again_is_the_copy_read_before() {
        // A thread of its own: its texts are this test's alone.
        std::thread::spawn(|| {
            let kept = |text: &str| READ.with_borrow(|(set, _)| set.contains(text));
            let a = SharedText::read("flux-system");
            let b: SharedText = serde_json::from_str("\"flux-system\"").unwrap();
            assert!(SharedText::ptr_eq(&a, &b));
            assert_eq!(a.holders(), 3, "a, b and the thread's set");
            let long = "x".repeat(READ_LONGEST + 1);
            assert!(!SharedText::ptr_eq(
                &SharedText::read(&long),
                &SharedText::read(&long)
            ));
            assert!(!kept(&long));
            drop((a, b));
            // Twice the floor of texts read and held: a sweep lets go of the one nobody holds.
            let held: Vec<SharedText> = (0..2048)
                .map(|i| SharedText::read(&format!("t{i}")))
                .collect();
            assert!(!kept("flux-system"));
            assert!(held.iter().all(|t| kept(t) && t.holders() == 2));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_text_is_its_words_in_sets_order_and_json() {
        let a = SharedText::from("main@sha1:4f2a");
        let b = SharedText::from(String::from("main@sha1:4f2a"));
        assert_eq!(a, b);
        assert!(!SharedText::ptr_eq(&a, &b));
        assert!(SharedText::ptr_eq(&a, &a.clone()));
        let set: HashSet<SharedText> = [a.clone()].into();
        assert!(SharedText::ptr_eq(set.get("main@sha1:4f2a").unwrap(), &a));
        let mut sorted = vec![SharedText::from("b"), SharedText::from("a")];
        sorted.sort();
        assert_eq!(sorted, ["a", "b"]);
        assert_eq!(serde_json::to_string(&a).unwrap(), "\"main@sha1:4f2a\"");
        let back: SharedText = serde_json::from_str("\"main@sha1:4f2a\"").unwrap();
        assert_eq!(back, a);
        let escaped: SharedText = serde_json::from_str(r#""say \"hi\" \u00e9""#).unwrap();
        assert_eq!(escaped, "say \"hi\" é");
        assert!(serde_json::from_str::<SharedText>("7").is_err());
        assert_eq!(format!("{a} {a:?}"), "main@sha1:4f2a \"main@sha1:4f2a\"");
    }
}
