//! The keymap is data: per view, which keys run which action. Built from the `[keymap.*]` tables
//! of the config (the embedded defaults with the user's file merged over them); anything that
//! cannot be used becomes a warning and the rest still works. The help screen and the footer are
//! generated from this table, so they always show the keys in effect.

use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::key_action::Action;

/// Where a binding applies. A view's own bindings are looked up before the global ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Context {
    Global,
    Fleet,
    Workspace,
    Cluster,
    Objects,
    Triage,
    Rollout,
    Matrix,
    Detail,
    Help,
    Results,
    Proposals,
    /// What broke inside (`w`): its workloads, one picked.
    Workloads,
    /// A tree on every cluster (`i`): its nodes, one picked.
    Tree,
}

impl Context {
    pub const ALL: [Context; 14] = [
        Context::Global,
        Context::Fleet,
        Context::Workspace,
        Context::Cluster,
        Context::Objects,
        Context::Triage,
        Context::Rollout,
        Context::Matrix,
        Context::Detail,
        Context::Help,
        Context::Results,
        Context::Proposals,
        Context::Workloads,
        Context::Tree,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Context::Global => "global",
            Context::Fleet => "fleet",
            Context::Workspace => "workspace",
            Context::Cluster => "cluster",
            Context::Objects => "objects",
            Context::Triage => "triage",
            Context::Rollout => "rollout",
            Context::Matrix => "matrix",
            Context::Detail => "detail",
            Context::Help => "help",
            Context::Results => "results",
            Context::Proposals => "proposals",
            Context::Workloads => "workloads",
            Context::Tree => "tree",
        }
    }
}

/// One key with its modifiers. Shift is part of the character (`G`), not a modifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
}

/// A key name in the config that names no key (the binding is left out, and said).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a key")]
pub struct NotAKey(pub String);

impl Key {
    pub fn from_event(event: &KeyEvent) -> Key {
        Key {
            code: event.code,
            ctrl: event.modifiers.contains(KeyModifiers::CONTROL),
            alt: event.modifiers.contains(KeyModifiers::ALT),
        }
    }

    pub fn parse(text: &str) -> Result<Key, NotAKey> {
        let mut rest = text;
        let (mut ctrl, mut alt) = (false, false);
        loop {
            if let Some(r) = rest.strip_prefix("ctrl-").filter(|r| !r.is_empty()) {
                ctrl = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("alt-").filter(|r| !r.is_empty()) {
                alt = true;
                rest = r;
            } else {
                break;
            }
        }
        let code = match rest {
            "enter" => KeyCode::Enter,
            "esc" => KeyCode::Esc,
            "tab" => KeyCode::Tab,
            "backtab" => KeyCode::BackTab,
            "backspace" => KeyCode::Backspace,
            "space" => KeyCode::Char(' '),
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pgup" => KeyCode::PageUp,
            "pgdn" => KeyCode::PageDown,
            c if c.chars().count() == 1 => KeyCode::Char(c.chars().next().unwrap_or(' ')),
            other => match function_key(other) {
                Some(n) => KeyCode::F(n),
                None => return Err(NotAKey(text.to_string())),
            },
        };
        Ok(Key { code, ctrl, alt })
    }
}

/// `f1` … `f12`.
fn function_key(text: &str) -> Option<u8> {
    let n: u8 = text.strip_prefix('f')?.parse().ok()?;
    (1..=12).contains(&n).then_some(n)
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("ctrl-")?;
        }
        if self.alt {
            f.write_str("alt-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => f.write_str("enter"),
            KeyCode::Esc => f.write_str("esc"),
            KeyCode::Tab => f.write_str("tab"),
            KeyCode::BackTab => f.write_str("backtab"),
            KeyCode::Backspace => f.write_str("backspace"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::Home => f.write_str("home"),
            KeyCode::End => f.write_str("end"),
            KeyCode::PageUp => f.write_str("pgup"),
            KeyCode::PageDown => f.write_str("pgdn"),
            KeyCode::F(n) => write!(f, "f{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// The keys of every action in every context, and of the plugins.
#[derive(Clone, Debug, Default)]
pub struct Keymap {
    bindings: Vec<(Context, Action, Vec<Key>)>,
    /// Each plugin's key in each view it applies to, by its place in the model's plugin list.
    plugins: Vec<(Context, usize, Key)>,
}

/// What a key runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Action(Action),
    /// The plugin at this place of the model's list.
    Plugin(usize),
}

/// What already has a key in a view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taken {
    Action(Action),
    /// The plugin of this number.
    Plugin(usize),
}

impl Keymap {
    /// Reads the `[keymap]` table. Unknown views, unknown actions and unreadable keys are
    /// returned as warnings; everything else is used.
    pub fn from_config(table: &toml::Table) -> (Keymap, Vec<String>) {
        let mut keymap = Keymap::default();
        let mut warnings = Vec::new();
        for (view, actions) in table {
            let Some(context) = Context::ALL.into_iter().find(|c| c.name() == view) else {
                let known: Vec<&str> = Context::ALL.iter().map(|c| c.name()).collect();
                warnings.push(format!(
                    "keymap.{view}: not a view (known: {})",
                    known.join(", ")
                ));
                continue;
            };
            let Some(actions) = actions.as_table() else {
                warnings.push(format!("keymap.{view}: expected a table of action = keys"));
                continue;
            };
            for (name, keys) in actions {
                let Some(action) = Action::ALL.into_iter().find(|a| a.name() == name) else {
                    warnings.push(format!("keymap.{view}.{name}: not an action"));
                    continue;
                };
                let texts: Vec<&str> = match keys {
                    toml::Value::String(s) => vec![s.as_str()],
                    toml::Value::Array(a) => a.iter().filter_map(|v| v.as_str()).collect(),
                    _ => Vec::new(),
                };
                if texts.is_empty() {
                    warnings.push(format!(
                        "keymap.{view}.{name}: expected a key or a list of keys"
                    ));
                    continue;
                }
                let mut parsed = Vec::new();
                for text in texts {
                    match Key::parse(text) {
                        Ok(k) => parsed.push(k),
                        Err(e) => warnings.push(format!("keymap.{view}.{name}: {e}")),
                    }
                }
                keymap.bindings.push((context, action, parsed));
            }
        }
        // A key bound twice in one view: the first binding wins, and the user hears about it.
        for context in Context::ALL {
            let mut seen: Vec<(Key, Action)> = Vec::new();
            for (_, action, keys) in keymap.bindings.iter().filter(|(c, ..)| *c == context) {
                for key in keys {
                    match seen.iter().find(|(k, _)| k == key) {
                        Some((_, other)) if other != action => warnings.push(format!(
                            "keymap.{}: {key} is bound to both {} and {}; {} wins",
                            context.name(),
                            other.name(),
                            action.name(),
                            other.name()
                        )),
                        Some(_) => {}
                        None => seen.push((*key, *action)),
                    }
                }
            }
        }
        (keymap, warnings)
    }

    /// The action `key` runs in `context`: the view's own bindings first, then the global ones.
    pub fn action(&self, context: Context, key: Key) -> Option<Action> {
        [context, Context::Global].into_iter().find_map(|c| {
            self.bindings
                .iter()
                .find(|(bc, _, keys)| *bc == c && keys.contains(&key))
                .map(|(_, action, _)| *action)
        })
    }

    /// Binds plugin number `index` to `key` in `context`, unless an action or an earlier
    /// plugin has that key there: then says which has it (and the key stays theirs).
    pub fn bind_plugin(&mut self, context: Context, index: usize, key: Key) -> Result<(), Taken> {
        if let Some(action) = self.action(context, key) {
            return Err(Taken::Action(action));
        }
        if let Some((_, j, _)) = self
            .plugins
            .iter()
            .find(|(c, _, k)| *c == context && *k == key)
        {
            return Err(Taken::Plugin(*j));
        }
        self.plugins.push((context, index, key));
        Ok(())
    }

    /// What `key` runs in `context`: an action (the view's own, then a global one), else a
    /// plugin.
    pub fn bound(&self, context: Context, key: Key) -> Option<Bound> {
        self.action(context, key).map(Bound::Action).or_else(|| {
            self.plugins
                .iter()
                .find(|(c, _, k)| *c == context && *k == key)
                .map(|(_, i, _)| Bound::Plugin(*i))
        })
    }

    /// The plugins bound in `context`, with their keys, in the order of the list.
    pub fn plugins_in(&self, context: Context) -> Vec<(usize, Key)> {
        self.plugins
            .iter()
            .filter(|(c, ..)| *c == context)
            .map(|(_, i, k)| (*i, *k))
            .collect()
    }

    /// The keys of `action` in `context` (its own, else the global ones).
    pub fn keys(&self, context: Context, action: Action) -> Vec<Key> {
        for c in [context, Context::Global] {
            if let Some((_, _, keys)) = self
                .bindings
                .iter()
                .find(|(bc, a, _)| *bc == c && *a == action)
            {
                return keys.clone();
            }
        }
        Vec::new()
    }

    /// Every (action, keys) that applies in `context`, view-specific ones first.
    pub fn effective(&self, context: Context) -> Vec<(Action, Vec<Key>)> {
        let mut out: Vec<(Action, Vec<Key>)> = Vec::new();
        for c in [context, Context::Global] {
            let start = out.len();
            for (_, action, keys) in self.bindings.iter().filter(|(bc, ..)| *bc == c) {
                // A global key the view binds to something else does not reach this action.
                let keys: Vec<Key> = keys
                    .iter()
                    .filter(|k| !out[..start].iter().any(|(_, taken)| taken.contains(k)))
                    .cloned()
                    .collect();
                if !out.iter().any(|(a, _)| a == action) && !keys.is_empty() {
                    out.push((*action, keys));
                }
            }
            // In the order of the action list, not of the config file.
            out[start..].sort_by_key(|(a, _)| *a);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn key(text: &str) -> Key {
        Key::parse(text).unwrap()
    }

    #[test]
    fn the_default_keymap_is_complete_and_clean() {
        let (keymap, warnings) = Keymap::from_config(&Config::defaults().keymap);
        assert_eq!(warnings, Vec::<String>::new());
        assert_eq!(keymap.action(Context::Fleet, key("q")), Some(Action::Quit));
        assert_eq!(
            keymap.action(Context::Fleet, key("ctrl-c")),
            Some(Action::Quit)
        );
        assert_eq!(
            keymap.action(Context::Fleet, key("G")),
            Some(Action::Bottom)
        );
        assert_eq!(
            keymap.action(Context::Triage, key("space")),
            Some(Action::Expand)
        );
        // In triage, space expands: the help and the footer offer `m` for marking there.
        let mark = keymap
            .effective(Context::Triage)
            .into_iter()
            .find(|(a, _)| *a == Action::Mark)
            .map(|(_, keys)| keys);
        assert_eq!(mark, Some(vec![key("m")]));
        // A view's own binding wins over the global one.
        assert_eq!(
            keymap.action(Context::Fleet, key("space")),
            Some(Action::Mark)
        );
        for action in Action::ALL {
            let bound = Context::ALL
                .iter()
                .any(|c| !keymap.keys(*c, action).is_empty());
            assert!(bound, "{} has no key", action.name());
        }
    }

    #[test]
    fn user_overrides_replace_keys_and_bad_entries_are_warnings() {
        // A user's config file, merged over the defaults by the config's own loader.
        let user = r#"
            [keymap.global]
            quit = "x"
            fly = "f"
            top = ["g", "ctrl-"]
            [keymap.detail]
            yaml = 3
            [keymap.nowhere]
            quit = "q"
        "#;
        let (config, config_warnings) = Config::parse(Some(user), std::path::Path::new("u.toml"));
        assert!(config_warnings.is_empty(), "{config_warnings:?}");
        let (keymap, warnings) = Keymap::from_config(&config.keymap);
        assert_eq!(keymap.action(Context::Fleet, key("x")), Some(Action::Quit));
        assert_eq!(keymap.action(Context::Fleet, key("q")), None);
        assert_eq!(keymap.action(Context::Fleet, key("g")), Some(Action::Top));
        // What the user did not rebind keeps its default, in the same table.
        assert_eq!(
            keymap.action(Context::Fleet, key("G")),
            Some(Action::Bottom)
        );
        assert_eq!(
            keymap.action(Context::Detail, key("e")),
            Some(Action::Events)
        );
        let all = warnings.join("\n");
        assert!(all.contains("keymap.global.fly: not an action"), "{all}");
        assert!(
            all.contains("keymap.global.top: \"ctrl-\" is not a key"),
            "{all}"
        );
        assert!(all.contains("keymap.detail.yaml: expected a key"), "{all}");
        assert!(all.contains("keymap.nowhere: not a view"), "{all}");
    }

    #[test]
    fn keys_print_the_way_they_are_written() {
        for text in ["ctrl-c", "G", "space", "enter", "pgdn", "f5", "alt-x"] {
            assert_eq!(key(text).to_string(), text);
        }
        assert_eq!(Key::parse("f13"), Err(NotAKey("f13".into())));
        assert!(Key::parse("hyper-x").is_err());
    }
}
