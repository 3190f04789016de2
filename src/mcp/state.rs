//! What every tool of `fluxfleet mcp` shares: the fleet (the session's index behind a lock, its
//! reader, the config), the scope a call names, its page, and what writing needs when it was
//! granted. The read tools are in `tools.rs`, the write tools in `writes.rs`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::CallToolResult;
use rmcp::{ErrorData, schemars};
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::page::PageAsked;
use crate::actions::Handled;
use crate::config::{Config, Permissions};
use crate::export::{Filter, StatusFilter};
use crate::fleet::scope::{NotAKind, Scope};
use crate::fleet::verbs::Verb;
use crate::fleet::{ClusterId, FluxKind, Index, ObjectKey};
use crate::session::{Reader, Writer};

/// The MCP server: the fleet, as the tools read it.
#[derive(Clone)]
pub struct FleetServer {
    pub(super) state: Arc<State>,
    pub(super) tool_router: ToolRouter<FleetServer>,
}

pub(super) struct State {
    pub index: Arc<RwLock<Index>>,
    /// True once every cluster has answered once (live or failed).
    pub settled: watch::Receiver<bool>,
    pub reader: Reader,
    pub config: Config,
    /// How long a call waits, at most, for the fleet's first answers.
    pub timeout: Duration,
    /// When the server started: calls wait for the fleet's first answers only until `timeout`
    /// after it (a cluster that never answers does not slow every later call).
    pub started: Instant,
    /// The bus the fleet is read from, whose history `history` reads; None: no history tool.
    pub nats: Option<crate::bus::Options>,
    /// With `--write`: what the write tools need; None: they do not exist.
    pub writes: Option<Writes>,
    /// With `--propose`: where the write tools keep what they propose, and for how long it may
    /// be approved.
    pub proposing: Option<Proposing>,
    /// Counts the batches of changes applied to the index: an answer made at one generation is
    /// the answer until the next.
    pub generation: Arc<std::sync::atomic::AtomicU64>,
    /// The last root causes made, for whoever asks the same of the same fleet (one made at a
    /// time: many clients asking at once wait for the first, not each make their own).
    pub root_causes: tokio::sync::Mutex<Option<(String, Arc<RootCauses>)>>,
}

/// The root causes of one scope, made once: the document's other fields and the causes.
pub(super) struct RootCauses {
    pub doc: serde_json::Map<String, Value>,
    pub causes: Vec<Value>,
}

/// `--propose`: the write tools make proposals a person decides.
pub(super) struct Proposing {
    pub store: crate::proposals::Keeper,
    pub expiry: Duration,
    /// Proposals one person may have pending at once.
    pub max_pending: usize,
}

/// A page of a list.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct Paging {
    /// The `nextCursor` of the previous page; absent for the first.
    pub cursor: Option<String>,
    /// Items wanted, 1 to 1000 (default 100).
    pub limit: Option<u32>,
}

pub(super) fn invalid(message: impl std::fmt::Display) -> ErrorData {
    ErrorData::invalid_params(message.to_string(), None)
}

pub(super) fn kind(text: Option<&str>) -> Result<Option<FluxKind>, ErrorData> {
    crate::fleet::filter::kind(text).map_err(|text| invalid(not_a_kind(text)))
}

fn not_a_kind(text: &str) -> String {
    format!(
        "{text:?} is not a Flux kind (Kustomization, HelmRelease, GitRepository, OCIRepository, HelmRepository, HelmChart, Bucket, or ks, hr, gitrepo …)"
    )
}

/// The filter of a call's scope and status: its kind and status named as fluxfleet knows them.
pub(super) fn filter(scope: &Scope, status: Option<&str>) -> Result<Filter, ErrorData> {
    let status = status
        .map(StatusFilter::parse)
        .transpose()
        .map_err(invalid)?;
    scope
        .filter(status)
        .map_err(|NotAKind(text)| invalid(not_a_kind(&text)))
}

impl Paging {
    pub(super) fn asked(&self) -> Result<PageAsked, ErrorData> {
        PageAsked::new(self.cursor.as_deref(), self.limit).map_err(invalid)
    }
}

/// `list` (the page) and `page` beside the answer's other fields.
pub(super) fn answer(
    mut fields: serde_json::Map<String, Value>,
    list: &str,
    paged: (Vec<Value>, super::page::Page),
) -> CallToolResult {
    fields.insert(list.into(), Value::Array(paged.0));
    fields.insert(
        "page".into(),
        serde_json::to_value(paged.1).unwrap_or(Value::Null),
    );
    structured(Value::Object(fields))
}

/// An answer: `value` with every string from a server made visible ([`visible`]).
pub(super) fn structured(mut value: Value) -> CallToolResult {
    visible(&mut value);
    CallToolResult::structured(value)
}

/// Every string and key in `value` with the characters that change what a terminal or a reader
/// sees rather than being seen — C0 and C1 controls but newline and tab, DEL, the bidirectional
/// overrides — written as visible escapes (`\u{1b}`, `\u{202e}`). JSON would escape only the
/// C0 controls, and an assistant's user may read its answers on a terminal.
pub(super) fn visible(value: &mut Value) {
    let hidden = |c: char| crate::headless::table::unsafe_char(c) && c != '\n' && c != '\t';
    let shown = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if hidden(c) {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect()
    };
    match value {
        Value::String(text) if text.chars().any(hidden) => *text = shown(text),
        Value::Array(items) => items.iter_mut().for_each(visible),
        Value::Object(fields) if fields.keys().any(|k| k.chars().any(hidden)) => {
            let taken = std::mem::take(fields);
            for (key, mut field) in taken {
                visible(&mut field);
                fields.insert(shown(&key), field);
            }
        }
        Value::Object(fields) => fields.values_mut().for_each(visible),
        _ => {}
    }
}

impl FleetServer {
    /// Waits (within the timeout) for every cluster's first answer, then runs `read` on the
    /// index as it is.
    pub(super) async fn read<T>(&self, read: impl FnOnce(&Index) -> T) -> Result<T, ErrorData> {
        let mut settled = self.state.settled.clone();
        let left = self
            .state
            .timeout
            .saturating_sub(self.state.started.elapsed());
        let _ = tokio::time::timeout(left, settled.wait_for(|s| *s)).await;
        // A read can take a while (the root causes of a whole fleet): the worker it runs on hands
        // its other tasks to the rest of the runtime meanwhile, so that other clients' calls are
        // not held up behind it.
        tokio::task::block_in_place(|| {
            let index =
                self.state.index.read().map_err(|_| {
                    ErrorData::internal_error("the fleet's index is unusable", None)
                })?;
            Ok(read(&index))
        })
    }
}

/// What writing needs: the session's writer and permissions, the dry runs, the reconciles
/// awaited.
pub(super) struct Writes {
    pub writer: Writer,
    pub permissions: Permissions,
    /// `--impersonate`: each call's requests are sent as the person asking, their name and
    /// groups behind this prefix (`oidc:`); None: as the server's own credentials.
    pub impersonate: Option<String>,
    pub dry_runs: Mutex<VecDeque<DryRun>>,
    pub awaited: Arc<Awaited>,
}

/// One dry run: what it was asked and what it would send.
pub(super) struct DryRun {
    pub token: String,
    pub verb: Verb,
    /// Its arguments, scope and reason, as given (the acting call must give the same).
    pub asked: Value,
    pub count: usize,
    pub at: Instant,
    /// Who asked for it (a token's subject): only they may act with its token.
    pub by: Option<String>,
}

/// Requested reconciles the index owner tells the executor about once handled.
#[derive(Default)]
pub(super) struct Awaited(Mutex<Vec<Awaiting>>);

pub(super) struct Awaiting {
    pub cluster: ClusterId,
    pub key: ObjectKey,
    pub token: String,
    pub tell: mpsc::UnboundedSender<Handled>,
}

impl Awaited {
    /// Tells about every awaited object `index` shows handled with its token, and forgets them.
    pub(super) fn tell(&self, index: &Index) {
        let Ok(mut awaited) = self.0.lock() else {
            return;
        };
        awaited.retain(|a| {
            let handled = index
                .cluster(a.cluster)
                .and_then(|c| c.objects.get(&a.key))
                .and_then(|o| o.last_handled_reconcile_at())
                == Some(a.token.as_str());
            if handled {
                let _ = a.tell.send(Handled {
                    cluster: a.cluster,
                    key: a.key.clone(),
                });
            }
            !handled && !a.tell.is_closed()
        });
    }

    pub(super) fn add(&self, awaiting: Awaiting) {
        if let Ok(mut awaited) = self.0.lock() {
            awaited.push(awaiting);
        }
    }
}

impl Writes {
    pub(super) fn new(
        writer: Writer,
        permissions: Permissions,
        impersonate: Option<String>,
    ) -> Writes {
        Writes {
            writer,
            permissions,
            impersonate,
            dry_runs: Mutex::new(VecDeque::new()),
            awaited: Arc::new(Awaited::default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn controls_and_overrides_from_servers_become_visible_and_lines_stay_lines() {
        let mut value = json!({
            "message": "pwned \u{1b}]52;c;ZXZpbA==\u{7} \u{9b}31m \u{202e}txt.exe",
            "yaml": "kind: Kustomization\nspec:\n\tpath: ./apps\n",
            "labels": { "team\u{202e}": "a\u{2066}b" },
            "list": ["ok", "\u{7f}"],
            "n": 3,
        });
        visible(&mut value);
        assert_eq!(
            value["message"],
            "pwned \\u{1b}]52;c;ZXZpbA==\\u{7} \\u{9b}31m \\u{202e}txt.exe"
        );
        assert_eq!(
            value["yaml"],
            "kind: Kustomization\nspec:\n\tpath: ./apps\n"
        );
        assert_eq!(value["labels"]["team\\u{202e}"], "a\\u{2066}b");
        assert_eq!(value["list"], json!(["ok", "\\u{7f}"]));
        assert_eq!(value["n"], 3);
    }
}
