//! A rollout as `get -o json`, MCP and the bus carry it: one flat object, its fields in the order
//! they had before a HelmRelease's own were boxed apart ([`HelmRollout`]), so that what a reader
//! of either build reads, and what a script compares, stays the same to the byte. Written from a
//! borrowed view; read into owned texts, then moved.

use std::borrow::Cow;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{HelmRollout, Rollout};
use crate::fleet::SharedText;
use crate::fleet::pace::Pace;

/// A text of the rollout, borrowed to be written, owned when read.
type Text<'a> = Option<Cow<'a, SharedText>>;

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct FlatRollout<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    applied: Text<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempted: Text<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    origin: Text<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    chart: Text<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    config_digest: Text<'a>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    digest: Text<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    previous: Text<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    since: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    drifted: Text<'a>,
    #[serde(default, skip_serializing_if = "Pace::is_unknown")]
    pace: Pace,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    proven: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tried_values: Text<'a>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    released_values: Text<'a>,
}

impl Serialize for Rollout {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        fn text(t: &Option<SharedText>) -> Text<'_> {
            t.as_ref().map(Cow::Borrowed)
        }
        let helm = self.helm();
        FlatRollout {
            applied: text(&self.applied),
            attempted: text(&self.attempted),
            origin: text(&self.origin),
            chart: text(&helm.chart),
            config_digest: text(&helm.config_digest),
            digest: text(&self.digest),
            previous: text(&self.previous),
            since: self.since,
            drifted: text(&helm.drifted),
            pace: self.pace,
            proven: self.proven,
            tried_values: text(&helm.tried_values),
            released_values: text(&helm.released_values),
        }
        .serialize(serializer)
    }
}

impl From<FlatRollout<'_>> for Rollout {
    fn from(flat: FlatRollout<'_>) -> Rollout {
        let text = |t: Text<'_>| t.map(Cow::into_owned);
        Rollout {
            applied: text(flat.applied),
            attempted: text(flat.attempted),
            origin: text(flat.origin),
            digest: text(flat.digest),
            previous: text(flat.previous),
            since: flat.since,
            pace: flat.pace,
            proven: flat.proven,
            helm: HelmRollout {
                chart: text(flat.chart),
                config_digest: text(flat.config_digest),
                drifted: text(flat.drifted),
                tried_values: text(flat.tried_values),
                released_values: text(flat.released_values),
            }
            .boxed(),
        }
    }
}
