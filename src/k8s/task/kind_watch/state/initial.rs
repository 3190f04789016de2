//! A streaming list's initial events: gathered until the BOOKMARK that marks their end, told then
//! as one list.

use super::super::super::summarize::{key_of, summarize};
use super::{Step, Watching};
use crate::fleet::Lists;
use crate::fleet::object::Object;
use crate::k8s::wire::api::Trouble;

/// The annotation of the BOOKMARK that ends a streaming list's initial events.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

impl Watching {
    /// One event among a streaming list's initial events (`line` is the whole event).
    pub(super) fn initial_event(
        &mut self,
        kind: &str,
        object: &Object<'_>,
        line: &[u8],
    ) -> Result<Option<Step>, Trouble> {
        let Some(initial) = self.initial.as_mut() else {
            return Ok(None);
        };
        match kind {
            "ADDED" | "MODIFIED" => {
                let Some(summary) = summarize(self.kind, Some(object)) else {
                    return Ok(None);
                };
                // The server sends each object once, as ADDED; a change before the end
                // (never sent by kube-apiserver) replaces the object it names.
                let same = (kind == "MODIFIED")
                    .then(|| initial.objects.iter().position(|s| s.key == summary.key))
                    .flatten();
                match same {
                    Some(i) => initial.objects[i] = summary,
                    None if initial.objects.len() >= self.max_objects => {
                        let what = format!("more than {} objects", self.max_objects);
                        return Err(self.too_many(what));
                    }
                    None => initial.objects.push(summary),
                }
                Ok(None)
            }
            "DELETED" => {
                if let Some(key) = key_of(self.kind, object) {
                    initial.objects.retain(|s| s.key != key);
                }
                Ok(None)
            }
            "BOOKMARK" if marks_the_end(line) => {
                let objects = std::mem::take(&mut initial.objects);
                self.initial = None;
                self.objects = objects.len();
                Ok(Some(Step::Listed(objects, Lists::Streaming)))
            }
            // A bookmark that does not end the initial events: the server took this for a
            // plain watch (a proxy dropped the parameters). Pages from now on.
            "BOOKMARK" => {
                self.close();
                self.lists = Lists::Unmarked;
                Ok(None)
            }
            other => Err(Trouble::garbage(format!("a watch event of type {other:?}"))),
        }
    }
}

/// Whether a BOOKMARK event is annotated as the end of a streaming list's initial events.
fn marks_the_end(line: &[u8]) -> bool {
    let Ok(event) = serde_json::from_slice::<serde_json::Value>(line) else {
        return false;
    };
    let key = format!(
        "/object/metadata/annotations/{}",
        INITIAL_EVENTS_END.replace('/', "~1")
    );
    event.pointer(&key).and_then(serde_json::Value::as_str) == Some("true")
}
