//! Bounded answers: one page of a list, with the cursor to the next, within a size an assistant
//! can read. A page says how many items the whole list has, and whether anything was cut.

use serde::Serialize;
use serde_json::Value;

/// Items in a page when the call names no limit.
pub const LIMIT: usize = 100;
/// The most items a call may ask for.
pub const MAX_LIMIT: usize = 1000;
/// A page's items never add up to more than this, serialized: the rest go to the next page.
/// About 16,000 tokens: what an assistant can take in beside its conversation (the SDK sends the
/// answer twice, as structured content and as its text, so the wire carries about twice this).
pub const MAX_BYTES: usize = 64 * 1024;
/// An item larger than this has its long lists cut to [`LIST`] entries (a root cause on
/// thousands of clusters), said by a `<list>Omitted` count beside each.
const ITEM_BYTES: usize = 16 * 1024;
const LIST: usize = 50;

/// Which page a call asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PageAsked {
    offset: usize,
    limit: usize,
}

/// A page asked for that this server does not give: the call's arguments are to be fixed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    #[error("cursor {0:?} is not one this server gave")]
    Cursor(String),
    #[error("limit {0}: ask for 1 to {MAX_LIMIT} items")]
    Limit(u32),
}

impl PageAsked {
    /// `cursor`: what the previous page gave as `nextCursor`; `limit`: items wanted (1 to
    /// [`MAX_LIMIT`]).
    pub fn new(cursor: Option<&str>, limit: Option<u32>) -> Result<PageAsked, PageError> {
        let offset = match cursor {
            None | Some("") => 0,
            Some(text) => text
                .parse()
                .map_err(|_| PageError::Cursor(text.to_string()))?,
        };
        let limit = match limit {
            None => LIMIT,
            Some(n @ 1..) if n as usize <= MAX_LIMIT => n as usize,
            Some(n) => return Err(PageError::Limit(n)),
        };
        Ok(PageAsked { offset, limit })
    }
}

impl PageAsked {
    /// The first page, of at most `limit` items (and [`MAX_LIMIT`]).
    pub fn first(limit: usize) -> PageAsked {
        PageAsked {
            offset: 0,
            limit: limit.clamp(1, MAX_LIMIT),
        }
    }
}

/// Where a page is in its list.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Page {
    /// Items in the whole list, as of this call.
    pub total: usize,
    /// Items in this page.
    pub returned: usize,
    /// Pass it as `cursor` for the next page; absent on the last one. The fleet may change
    /// between calls: a page is the list as it is when asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Some item of this page had lists cut (each says how many entries it left out).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

/// The page `asked` of `items`: at most its limit, within [`MAX_BYTES`] (always one item,
/// however large, so that a page moves on).
pub fn take<T: Serialize>(items: impl Iterator<Item = T>, asked: PageAsked) -> (Vec<Value>, Page) {
    let mut out = Vec::new();
    let (mut bytes, mut total, mut cut) = (0, 0, false);
    let mut next = None;
    for item in items {
        total += 1;
        if total <= asked.offset || next.is_some() {
            continue;
        }
        let value = serde_json::to_value(&item).unwrap_or(Value::Null);
        let (value, size, shrunk) = fit(value);
        if out.len() == asked.limit || (!out.is_empty() && bytes + size > MAX_BYTES) {
            next = Some(total - 1);
            continue;
        }
        bytes += size;
        cut |= shrunk;
        out.push(value);
    }
    let page = Page {
        total,
        returned: out.len(),
        next_cursor: next.map(|n| n.to_string()),
        cut,
    };
    (out, page)
}

/// The item, cut when too large, with its size and whether it was cut.
fn fit(mut value: Value) -> (Value, usize, bool) {
    let size = |v: &Value| serde_json::to_vec(v).map_or(0, |b| b.len());
    let before = size(&value);
    if before <= ITEM_BYTES {
        return (value, before, false);
    }
    let cut = shorten(&mut value, 0);
    let after = size(&value);
    (value, after, cut)
}

/// Cuts every list longer than [`LIST`] in `value`'s fields (two levels down), leaving
/// `<field>Omitted` beside it.
fn shorten(value: &mut Value, depth: usize) -> bool {
    let Value::Object(fields) = value else {
        return false;
    };
    let mut cut = false;
    let mut omitted = Vec::new();
    for (name, field) in fields.iter_mut() {
        match field {
            Value::Array(items) if items.len() > LIST => {
                omitted.push((format!("{name}Omitted"), items.len() - LIST));
                items.truncate(LIST);
                cut = true;
            }
            _ => {}
        }
        if depth < 1 {
            match field {
                Value::Array(items) => {
                    for item in items {
                        cut |= shorten(item, depth + 1);
                    }
                }
                other => cut |= shorten(other, depth + 1),
            }
        }
    }
    for (name, n) in omitted {
        fields.insert(name, Value::from(n));
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn all(n: usize) -> impl Iterator<Item = Value> {
        (0..n).map(|i| json!({ "n": i }))
    }

    #[test]
    fn pages_follow_each_other_to_the_end_and_say_the_total() {
        let mut cursor = None;
        let mut seen = Vec::new();
        loop {
            let asked = PageAsked::new(cursor.as_deref(), Some(7)).unwrap();
            let (items, page) = take(all(20), asked);
            assert_eq!(page.total, 20);
            assert_eq!(page.returned, items.len());
            seen.extend(items.into_iter().map(|v| v["n"].as_u64().unwrap()));
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(seen, (0..20).collect::<Vec<u64>>());
    }

    #[test]
    fn a_page_stays_within_its_bytes_and_moves_on_with_one_large_item() {
        let big = |i: usize| json!({ "n": i, "text": "x".repeat(15 * 1024) });
        let (items, page) = take((0..10).map(big), PageAsked::new(None, Some(10)).unwrap());
        assert_eq!(items.len(), 4, "four items of 15 KiB fit in 64 KiB");
        assert_eq!(page.next_cursor.as_deref(), Some("4"));
        let huge = json!({ "text": "x".repeat(2 * MAX_BYTES) });
        let (items, page) = take([huge].into_iter(), PageAsked::new(None, None).unwrap());
        assert_eq!((items.len(), page.next_cursor), (1, None));
    }

    #[test]
    fn long_lists_of_a_large_item_are_cut_and_counted() {
        let copies: Vec<Value> = (0..3000)
            .map(|i| json!({ "cluster": format!("cluster-{i:05}"), "blocks": ["Kustomization/flux-system/apps"] }))
            .collect();
        let cause = json!({ "name": "apps", "clusters": copies });
        let (items, page) = take([cause].into_iter(), PageAsked::new(None, None).unwrap());
        assert!(page.cut);
        assert_eq!(items[0]["clusters"].as_array().unwrap().len(), LIST);
        assert_eq!(items[0]["clustersOmitted"], 3000 - LIST);
        let small = json!({ "clusters": [1, 2, 3] });
        let (items, page) = take(
            [small.clone()].into_iter(),
            PageAsked::new(None, None).unwrap(),
        );
        assert_eq!((items[0].clone(), page.cut), (small, false));
    }

    #[test]
    fn cursors_and_limits_out_of_range_are_refused_by_name() {
        assert_eq!(
            PageAsked::new(Some("abc"), None),
            Err(PageError::Cursor("abc".into()))
        );
        assert_eq!(
            PageAsked::new(None, Some(0)).unwrap_err().to_string(),
            "limit 0: ask for 1 to 1000 items"
        );
        assert_eq!(
            PageAsked::new(None, Some(5000)),
            Err(PageError::Limit(5000))
        );
        let (items, page) = take(all(3), PageAsked::new(Some("10"), None).unwrap());
        assert_eq!((items.len(), page.total, page.next_cursor), (0, 3, None));
    }
}
