//! A summary as the bus carries it: one flat JSON object, as before its rare texts were boxed
//! together ([`Marks`]) and its inventory count made small. Collectors and readers of either
//! build read each other's. Written from a borrowed view; read into owned fields, then moved.

use crate::fleet::SharedText;
use std::borrow::Cow;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{Entries, FluxSummary, Marks, ObjectKey, ObjectRef, Ready};
use crate::fleet::Health;
use crate::fleet::deployed::Rollout;

#[derive(Serialize, Deserialize)]
pub(super) struct Flat<'a> {
    key: Cow<'a, ObjectKey>,
    health: Health,
    suspended: bool,
    ready: Option<Ready>,
    reason: Option<SharedText>,
    message: Option<SharedText>,
    revision: Option<SharedText>,
    generation: i64,
    observed_generation: Option<i64>,
    last_transition: Option<Timestamp>,
    last_handled_reconcile_at: Option<Cow<'a, str>>,
    requested_at: Option<Cow<'a, str>>,
    source: Option<Cow<'a, ObjectRef>>,
    depends_on: Cow<'a, [ObjectRef]>,
    inventory: Option<u32>,
    suspended_by: Option<Cow<'a, str>>,
    suspend_reason: Option<Cow<'a, str>>,
    rollout: Option<Cow<'a, Rollout>>,
}

impl Serialize for FluxSummary {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        fn text(t: Option<&str>) -> Option<Cow<'_, str>> {
            t.map(Cow::Borrowed)
        }
        Flat {
            key: Cow::Borrowed(&self.key),
            health: self.health,
            suspended: self.suspended,
            ready: self.ready,
            reason: self.reason.clone(),
            message: self.message.clone(),
            revision: self.revision.clone(),
            generation: self.generation,
            observed_generation: self.observed_generation,
            last_transition: self.since,
            last_handled_reconcile_at: text(self.last_handled_reconcile_at()),
            requested_at: text(self.requested_at()),
            source: self.source.as_deref().map(Cow::Borrowed),
            depends_on: Cow::Borrowed(&self.depends_on),
            inventory: self.inventory(),
            suspended_by: text(self.mark(|m| &m.suspended_by)),
            suspend_reason: text(self.mark(|m| &m.suspend_reason)),
            rollout: self.rollout.as_deref().map(Cow::Borrowed),
        }
        .serialize(serializer)
    }
}

impl From<Flat<'_>> for FluxSummary {
    fn from(flat: Flat<'_>) -> FluxSummary {
        let text = |t: Option<Cow<'_, str>>| t.map(|t| Box::from(&*t));
        FluxSummary {
            key: flat.key.into_owned(),
            health: flat.health,
            suspended: flat.suspended,
            ready: flat.ready,
            reason: flat.reason,
            message: flat.message,
            revision: flat.revision,
            generation: flat.generation,
            observed_generation: flat.observed_generation,
            since: flat.last_transition,
            marks: Marks {
                last_handled_reconcile_at: text(flat.last_handled_reconcile_at),
                requested_at: text(flat.requested_at),
                suspended_by: text(flat.suspended_by),
                suspend_reason: text(flat.suspend_reason),
            }
            .boxed(),
            source: flat.source.map(|s| Box::new(s.into_owned())),
            depends_on: flat.depends_on.into_owned().into(),
            inventory: flat.inventory.map(Entries::new),
            rollout: flat.rollout.map(|r| Box::new(r.into_owned())),
            fingerprint: 0,
        }
    }
}
