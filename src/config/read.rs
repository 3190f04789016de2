//! Reading the user's file key by key: a key or an entry that cannot be used is dropped alone,
//! with a warning naming its line and key, and everything valid still applies. Whatever cannot
//! be read under `[actions]` or `[[modes]]` — or a section fluxfleet does not know, which may be
//! a misspelt one — is a guardrail problem: writes are refused until the file is fixed.

use serde::de::DeserializeOwned;
use toml::de::{DeTable, DeValue};
use toml::{Spanned, Table, Value};

use super::engine::RawEngine;
use super::modes::{Actions, ModeRule};
use super::plugins::PluginEntry;
use super::sections::{InventorySection, LabelRule, RawRollout, SourceEntry, Ui, WorkspaceRule};

/// What can be used of a user's file.
pub(super) struct Checked {
    /// The keys and entries that read cleanly, to merge over the defaults.
    pub table: Table,
    pub warnings: Vec<String>,
    pub guardrail_problems: Vec<String>,
}

/// Keeps of `user` what reads cleanly against `defaults`; `text` is the file, for line numbers.
pub(super) fn check(user: Table, defaults: &Table, text: &str) -> Checked {
    let lines = Lines::new(text);
    let mut out = Checked {
        table: Table::new(),
        warnings: Vec::new(),
        guardrail_problems: Vec::new(),
    };
    for (section, value) in user {
        let guards = matches!(section.as_str(), "actions" | "modes");
        let mut refuse = |out: &mut Checked, path: &[Seg], why: String| {
            let at = lines
                .line(path)
                .map_or(String::new(), |n| format!("line {n}: "));
            let name = dotted(path);
            if guards {
                out.warnings.push(format!(
                    "{at}{name}: {why}; ignored, and writes are refused until it is fixed"
                ));
                out.guardrail_problems.push(format!("{at}{name}: {why}"));
            } else {
                out.warnings.push(format!("{at}{name}: {why}; ignored"));
            }
        };
        let kept = match section.as_str() {
            "engine" => keys::<RawEngine>(&section, value, defaults, &mut out, &mut refuse),
            "inventory" => {
                keys::<InventorySection>(&section, value, defaults, &mut out, &mut refuse)
            }
            "ui" => keys::<Ui>(&section, value, defaults, &mut out, &mut refuse),
            "rollout" => keys::<RawRollout>(&section, value, defaults, &mut out, &mut refuse),
            "actions" => keys::<Actions>(&section, value, defaults, &mut out, &mut refuse),
            "sources" => entries::<SourceEntry>(&section, value, &mut out, &mut refuse),
            "workspaces" => entries::<WorkspaceRule>(&section, value, &mut out, &mut refuse),
            "labels" => entries::<LabelRule>(&section, value, &mut out, &mut refuse),
            "modes" => entries::<ModeRule>(&section, value, &mut out, &mut refuse),
            "plugins" => entries::<PluginEntry>(&section, value, &mut out, &mut refuse),
            // Read by the app, which reports what it cannot use.
            "keymap" => Some(value),
            _ => {
                let path = [Seg::Key(&section)];
                let at = lines
                    .line(&path)
                    .map_or(String::new(), |n| format!("line {n}: "));
                let why = format!("{at}[{section}]: not a section of the config");
                out.warnings.push(format!(
                    "{why}; ignored, and writes are refused until it is fixed (a misspelt \
                     [actions] or [[modes]] must not lose its guardrails)"
                ));
                out.guardrail_problems.push(why);
                None
            }
        };
        if let Some(kept) = kept {
            out.table.insert(section, kept);
        }
    }
    out
}

/// One step of a key path: a key, or an entry of an array of tables.
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// `actions.deny`, `modes[2]`.
fn dotted(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if out.is_empty() => out.push_str(k),
            Seg::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

type Refuse<'r> = dyn FnMut(&mut Checked, &[Seg], String) + 'r;

/// A table section (`[engine]`): each key is tried on its own over the defaults of its section.
fn keys<T: DeserializeOwned>(
    section: &str,
    value: Value,
    defaults: &Table,
    out: &mut Checked,
    refuse: &mut Refuse<'_>,
) -> Option<Value> {
    let Value::Table(user) = value else {
        refuse(out, &[Seg::Key(section)], "expected a table".into());
        return None;
    };
    let base = match defaults.get(section) {
        Some(Value::Table(t)) => t.clone(),
        _ => Table::new(),
    };
    let mut kept = Table::new();
    for (key, v) in user {
        let mut candidate = base.clone();
        candidate.insert(key.clone(), v.clone());
        match T::deserialize(Value::Table(candidate)) {
            Ok(_) => {
                kept.insert(key, v);
            }
            Err(e) => refuse(out, &[Seg::Key(section), Seg::Key(&key)], message(&e)),
        }
    }
    Some(Value::Table(kept))
}

/// An array of tables (`[[modes]]`): each entry is kept or dropped on its own.
fn entries<T: DeserializeOwned>(
    section: &str,
    value: Value,
    out: &mut Checked,
    refuse: &mut Refuse<'_>,
) -> Option<Value> {
    let Value::Array(items) = value else {
        let why = format!("expected [[{section}]] entries");
        refuse(out, &[Seg::Key(section)], why);
        return None;
    };
    let mut kept = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        match T::deserialize(item.clone()) {
            Ok(_) => kept.push(item),
            Err(e) => refuse(out, &[Seg::Key(section), Seg::Index(i)], message(&e)),
        }
    }
    Some(Value::Array(kept))
}

/// serde's message, on one line.
fn message(e: &toml::de::Error) -> String {
    e.message().trim().replace('\n', " ")
}

/// Where keys are in the file.
struct Lines<'t> {
    text: &'t str,
    doc: Option<Spanned<DeTable<'t>>>,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Lines<'t> {
        Lines {
            text,
            doc: DeTable::parse(text).ok(),
        }
    }

    /// The 1-based line where `path` is written, if it is.
    fn line(&self, path: &[Seg]) -> Option<usize> {
        let mut table = self.doc.as_ref()?.get_ref();
        let mut value: Option<&Spanned<DeValue>> = None;
        let mut span = None;
        for seg in path {
            match seg {
                Seg::Key(k) => {
                    if let Some(v) = value {
                        let DeValue::Table(t) = v.get_ref() else {
                            return None;
                        };
                        table = t;
                    }
                    let (key, v) = table.iter().find(|(key, _)| key.get_ref() == k)?;
                    span = Some(key.span());
                    value = Some(v);
                }
                Seg::Index(i) => {
                    let DeValue::Array(items) = value?.get_ref() else {
                        return None;
                    };
                    let item = items.get(*i)?;
                    span = Some(item.span());
                    value = Some(item);
                }
            }
        }
        let start = span?.start;
        Some(self.text.get(..start)?.matches('\n').count() + 1)
    }
}
