//! Lenient readers for the fields of a Flux object. A field of the wrong JSON type reads as
//! absent, as `Value::as_str` and friends would have it, never as an error that would lose the
//! object (or the whole list page it came in). Strings are borrowed from the bytes they were read
//! from where they hold no escape; anything a summary does not read is skipped, never built.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The most items kept of any array: what a summary reads of a list (conditions, history,
/// dependsOn) is far fewer. The rest are skipped.
pub const MAX_ITEMS: usize = 256;
/// The longest string copied, in bytes (cut at a character boundary): a condition's message is
/// shown in a line or a panel, never 32 MiB of it. Strings without escapes are borrowed whole
/// and bounded when summarised.
pub const MAX_TEXT: usize = 32 * 1024;

/// A string field; absent when missing or not a string.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Text<'a>(pub Option<Cow<'a, str>>);

impl Text<'_> {
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

/// An integer field; absent when missing, not an integer, or beyond `i64`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Int(pub Option<i64>);

/// A boolean field; absent when missing or not a boolean.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Flag(pub Option<bool>);

/// Whether a field is there and not null (`deletionTimestamp`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Set(pub bool);

/// An object field read as `T`; absent when missing or not an object.
#[derive(Clone, Debug, PartialEq)]
pub struct Lax<T>(pub Option<T>);

impl<T> Default for Lax<T> {
    fn default() -> Lax<T> {
        Lax(None)
    }
}

impl<T> Lax<T> {
    pub fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

/// An array field whose items are read as `T` (an item that is not an object as `T::default()`,
/// so that positions hold), at most [`MAX_ITEMS`] of them; empty when missing or not an array.
#[derive(Clone, Debug, PartialEq)]
pub struct List<T>(pub Vec<T>);

impl<T> Default for List<T> {
    fn default() -> List<T> {
        List(Vec::new())
    }
}

/// How many entries an inventory holds: the length of an array, or of an object's `entries`
/// array (`status.inventory` is either, by kind); the entries themselves are skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Count(pub Option<u64>);

/// Any JSON value, as the scalar readers see it: compound values are skipped.
enum Any<'a> {
    Str(Cow<'a, str>),
    Int(i64),
    Bool(bool),
    Null,
    Other,
}

struct AnyVisitor;

impl<'de> Visitor<'de> for AnyVisitor {
    type Value = Any<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Any<'de>, E> {
        Ok(Any::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Any<'de>, E> {
        Ok(Any::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Any<'de>, E> {
        Ok(i64::try_from(v).map_or(Any::Other, Any::Int))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Any<'de>, E> {
        Ok(Any::Other)
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Any<'de>, E> {
        Ok(Any::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Any<'de>, E> {
        Ok(Any::Str(Cow::Owned(cut(v).to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Any<'de>, E> {
        Ok(Any::Str(Cow::Owned(if v.len() > MAX_TEXT {
            cut(&v).to_owned()
        } else {
            v
        })))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Any<'de>, E> {
        Ok(Any::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Any<'de>, E> {
        Ok(Any::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Any<'de>, A::Error> {
        drain_seq(seq)?;
        Ok(Any::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Any<'de>, A::Error> {
        drain_map(map)?;
        Ok(Any::Other)
    }
}

impl<'de> Deserialize<'de> for Any<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Any<'de>, D::Error> {
        d.deserialize_any(AnyVisitor)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text<'a>, D::Error> {
        Ok(Text(match Any::deserialize(d)? {
            Any::Str(s) => Some(s),
            _ => None,
        }))
    }
}

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Int, D::Error> {
        Ok(Int(match Any::deserialize(d)? {
            Any::Int(i) => Some(i),
            _ => None,
        }))
    }
}

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Flag, D::Error> {
        Ok(Flag(match Any::deserialize(d)? {
            Any::Bool(b) => Some(b),
            _ => None,
        }))
    }
}

impl<'de> Deserialize<'de> for Set {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Set, D::Error> {
        Ok(Set(!matches!(Any::deserialize(d)?, Any::Null)))
    }
}

/// The scalar `visit_*` methods of a compound reader: a scalar where an object or array was
/// expected reads as `$absent`.
macro_rules! scalars_read_as {
    ($absent:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($absent)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($absent)
        }
    };
}
pub(super) use scalars_read_as;

struct LaxVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for LaxVisitor<T> {
    type Value = Lax<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    scalars_read_as!(Lax(None));
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Lax<T>, A::Error> {
        drain_seq(seq)?;
        Ok(Lax(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Lax<T>, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Lax(Some(t)))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Lax<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Lax<T>, D::Error> {
        d.deserialize_any(LaxVisitor(PhantomData))
    }
}

struct ListVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de> + Default> Visitor<'de> for ListVisitor<T> {
    type Value = List<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }
    scalars_read_as!(List(Vec::new()));
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<List<T>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(8));
        while items.len() < MAX_ITEMS {
            match seq.next_element::<Lax<T>>()? {
                Some(item) => items.push(item.0.unwrap_or_default()),
                None => return Ok(List(items)),
            }
        }
        drain_seq(seq)?;
        Ok(List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<List<T>, A::Error> {
        drain_map(map)?;
        Ok(List(Vec::new()))
    }
}

impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<List<T>, D::Error> {
        d.deserialize_any(ListVisitor(PhantomData))
    }
}

struct CountVisitor;

impl<'de> Visitor<'de> for CountVisitor {
    type Value = Count;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array, or an object with entries")
    }
    scalars_read_as!(Count(None));
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Count, A::Error> {
        drain_seq(seq).map(|n| Count(Some(n)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Count, A::Error> {
        let mut count = Count(None);
        while let Some(key) = map.next_key::<Text>()? {
            if key.get() == Some("entries") {
                count = map.next_value::<Count>()?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(count)
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Count, D::Error> {
        d.deserialize_any(CountVisitor)
    }
}

/// Skips the rest of an array; how many items it had.
pub(super) fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<u64, A::Error> {
    let mut n = 0;
    while seq.next_element::<IgnoredAny>()?.is_some() {
        n += 1;
    }
    Ok(n)
}

/// Skips the rest of an object.
fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// `text` cut to at most [`MAX_TEXT`] bytes, at a character boundary.
fn cut(text: &str) -> &str {
    if text.len() <= MAX_TEXT {
        return text;
    }
    let mut end = MAX_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
