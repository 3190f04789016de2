//! Themes: semantic slots (`health.failed`, `chrome.selected`) mapped to styles. Widgets ask for a
//! slot, never for a colour. A theme file may name a `parent` and set only some slots; every slot
//! it leaves out comes from the parent (finally from the built-in dark theme).

use std::path::Path;
use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

use crate::fleet::{Health, Phase};

macro_rules! slots {
    ($($variant:ident => $name:literal,)*) => {
        /// A place in the UI that has a style.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Slot { $($variant,)* }

        impl Slot {
            pub const ALL: &'static [Slot] = &[$(Slot::$variant,)*];

            pub fn name(self) -> &'static str {
                match self { $(Slot::$variant => $name,)* }
            }
        }
    };
}

slots! {
    Text => "chrome.text",
    Dim => "chrome.dim",
    Border => "chrome.border",
    BorderFocused => "chrome.border_focused",
    Title => "chrome.title",
    Header => "chrome.header",
    Selected => "chrome.selected",
    StatusBar => "chrome.status_bar",
    Key => "chrome.key",
    Match => "chrome.match",
    Warning => "chrome.warning",
    Error => "chrome.error",
    Breadcrumb => "chrome.breadcrumb",
    CommandLine => "chrome.command_line",
    Stalled => "health.stalled",
    Failed => "health.failed",
    Deleting => "health.deleting",
    Progressing => "health.progressing",
    Waiting => "health.waiting",
    Suspended => "health.suspended",
    Running => "health.running",
    Ready => "health.ready",
    NotApplicable => "health.not_applicable",
    Live => "phase.live",
    Pending => "phase.pending",
    Down => "phase.failed",
}

impl Slot {
    pub fn of_health(health: Health) -> Slot {
        match health {
            Health::Stalled => Slot::Stalled,
            Health::Failed => Slot::Failed,
            Health::Deleting => Slot::Deleting,
            Health::Progressing => Slot::Progressing,
            Health::Waiting => Slot::Waiting,
            Health::Suspended => Slot::Suspended,
            Health::Running => Slot::Running,
            Health::Ready => Slot::Ready,
            Health::NotApplicable => Slot::NotApplicable,
        }
    }

    pub fn of_phase(phase: Phase) -> Slot {
        if phase.is_up() {
            Slot::Live
        } else if phase.is_pending() {
            Slot::Pending
        } else {
            Slot::Down
        }
    }
}

/// The themes shipped in `themes/`, built into the binary.
pub const BUILT_IN: [(&str, &str); 4] = [
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
    ("colorblind", include_str!("../../themes/colorblind.toml")),
];

#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    pub name: String,
    styles: Vec<Style>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    parent: Option<String>,
    #[serde(default)]
    slots: toml::Table,
}

impl Theme {
    pub fn style(&self, slot: Slot) -> Style {
        self.styles.get(slot as usize).copied().unwrap_or_default()
    }

    /// The built-in dark theme; it sets every slot.
    pub fn dark() -> Theme {
        let mut theme = Theme {
            name: "dark".into(),
            styles: vec![Style::default(); Slot::ALL.len()],
        };
        if let Ok(file) = toml::from_str::<File>(BUILT_IN[0].1) {
            theme.apply(&file, "dark", &mut Vec::new());
        }
        theme
    }

    /// The theme a session uses: `--theme`, else the config's `[ui] theme`; user themes are
    /// read from the `themes` folder next to the config file.
    pub fn chosen(
        flag: Option<&str>,
        config: &super::Config,
        config_path: Option<&Path>,
    ) -> (Theme, Vec<String>) {
        let dir = config_path.and_then(Path::parent).map(|d| d.join("themes"));
        Theme::load(flag.unwrap_or(&config.ui.theme), dir.as_deref())
    }

    /// Loads theme `name`: a file `<dir>/<name>.toml` if there is one, else a built-in theme.
    /// Anything unusable is a warning naming the file and slot; the dark theme fills the gaps.
    pub fn load(name: &str, dir: Option<&Path>) -> (Theme, Vec<String>) {
        let mut warnings = Vec::new();
        // The theme and its parents, child first, each read once.
        let mut chain: Vec<(String, String, File)> = Vec::new();
        let mut next = Some(name.to_string());
        while let Some(current) = next.take() {
            if chain.iter().any(|(n, ..)| *n == current) || chain.len() > 8 {
                warnings.push(format!(
                    "theme {current:?}: parents form a loop; stopped there"
                ));
                break;
            }
            let Some((origin, text)) = source(&current, dir, &mut warnings) else {
                break;
            };
            match toml::from_str::<File>(&text) {
                Ok(file) => {
                    next = file.parent.clone();
                    chain.push((current, origin, file));
                }
                Err(e) => warnings.push(format!("{origin}: {}", e.message().trim())),
            }
        }
        let mut theme = Theme::dark();
        theme.name = name.to_string();
        for (_, origin, file) in chain.iter().rev() {
            theme.apply(file, origin, &mut warnings);
        }
        (theme, warnings)
    }

    fn apply(&mut self, file: &File, origin: &str, warnings: &mut Vec<String>) {
        for (name, value) in &file.slots {
            let Some(slot) = Slot::ALL.iter().find(|s| s.name() == name) else {
                warnings.push(format!("{origin}: {name:?} is not a theme slot"));
                continue;
            };
            match value.as_str().map(parse_style) {
                Some(Ok(style)) => self.styles[*slot as usize] = style,
                Some(Err(e)) => warnings.push(format!("{origin}: {name}: {e}")),
                None => warnings.push(format!(
                    "{origin}: {name}: expected a string such as \"red bold\""
                )),
            }
        }
    }
}

/// The text of theme `name` and where it came from.
fn source(name: &str, dir: Option<&Path>, warnings: &mut Vec<String>) -> Option<(String, String)> {
    if let Some(dir) = dir {
        let path = dir.join(format!("{name}.toml"));
        match std::fs::read_to_string(&path) {
            Ok(text) => return Some((path.display().to_string(), text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                warnings.push(format!("{}: {e}", path.display()));
            }
        }
    }
    if let Some((_, text)) = BUILT_IN.iter().find(|(n, _)| *n == name) {
        return Some((format!("themes/{name}.toml"), text.to_string()));
    }
    let known: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
    warnings.push(format!(
        "theme {name:?} not found (built in: {}); using dark",
        known.join(", ")
    ));
    None
}

/// What is wrong with a style in a theme file: the file is to be fixed (the slot keeps the
/// theme's own style meanwhile).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StyleError {
    #[error("\"on\" needs a colour after it")]
    OnWithoutColour,
    #[error("{0:?} is not a colour (a name, #rrggbb or 0-255)")]
    NotAColour(String),
}

/// `"red"`, `"black on yellow"`, `"#ff8800 bold"`, `"208 underlined"`.
pub fn parse_style(text: &str) -> Result<Style, StyleError> {
    let mut style = Style::default();
    let mut words = text.split_whitespace();
    while let Some(word) = words.next() {
        let modifier = match word {
            "bold" => Some(Modifier::BOLD),
            "dim" => Some(Modifier::DIM),
            "italic" => Some(Modifier::ITALIC),
            "underlined" => Some(Modifier::UNDERLINED),
            "reversed" => Some(Modifier::REVERSED),
            _ => None,
        };
        if let Some(m) = modifier {
            style = style.add_modifier(m);
        } else if word == "on" {
            let bg = words.next().ok_or(StyleError::OnWithoutColour)?;
            style = style.bg(color(bg)?);
        } else {
            style = style.fg(color(word)?);
        }
    }
    Ok(style)
}

fn color(word: &str) -> Result<Color, StyleError> {
    Color::from_str(word).map_err(|_| StyleError::NotAColour(word.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_theme_loads_cleanly_and_sets_every_slot() {
        for (name, text) in BUILT_IN {
            let (theme, warnings) = Theme::load(name, None);
            assert_eq!(warnings, Vec::<String>::new(), "{name}");
            let file: File = toml::from_str(text).unwrap();
            if file.parent.is_none() {
                for slot in Slot::ALL {
                    assert!(
                        file.slots.contains_key(slot.name()),
                        "{name} lacks {}",
                        slot.name()
                    );
                }
            }
            assert_ne!(
                theme.style(Slot::Failed),
                theme.style(Slot::Ready),
                "{name}"
            );
        }
    }

    #[test]
    fn a_user_theme_overrides_some_slots_of_its_parent_and_bad_slots_are_warnings() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("mine.toml"),
            "parent = \"light\"\n[slots]\n\"health.failed\" = \"magenta bold\"\n\"health.nope\" = \"red\"\n\"chrome.key\" = \"plaid\"\n",
        )
        .unwrap();
        let (theme, warnings) = Theme::load("mine", Some(dir.path()));
        let (light, _) = Theme::load("light", None);
        assert_eq!(
            theme.style(Slot::Failed),
            Style::default()
                .fg(Color::Magenta)
                .add_modifier(Modifier::BOLD)
        );
        assert_eq!(theme.style(Slot::Ready), light.style(Slot::Ready));
        let all = warnings.join("\n");
        assert!(all.contains("\"health.nope\" is not a theme slot"), "{all}");
        assert!(
            all.contains("chrome.key: \"plaid\" is not a colour"),
            "{all}"
        );
        let (fallback, warnings) = Theme::load("missing", Some(dir.path()));
        assert_eq!(
            fallback.style(Slot::Failed),
            Theme::dark().style(Slot::Failed)
        );
        assert!(warnings[0].contains("theme \"missing\" not found"));
    }

    #[test]
    fn the_config_file_names_a_theme_kept_next_to_it_and_the_flag_wins() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("themes")).unwrap();
        std::fs::write(
            dir.path().join("themes").join("night.toml"),
            "parent = \"dark\"\n[slots]\n\"health.failed\" = \"magenta\"\n",
        )
        .unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[ui]\ntheme = \"night\"\n").unwrap();
        let (config, warnings) = super::super::Config::load(Some(&path), true);
        assert!(warnings.is_empty(), "{warnings:?}");
        let (theme, warnings) = Theme::chosen(None, &config, Some(&path));
        assert_eq!(warnings, Vec::<String>::new());
        assert_eq!(
            theme.style(Slot::Failed),
            Style::default().fg(Color::Magenta)
        );
        let (theme, _) = Theme::chosen(Some("light"), &config, Some(&path));
        let (light, _) = Theme::load("light", None);
        assert_eq!(theme.style(Slot::Failed), light.style(Slot::Failed));
    }

    #[test]
    fn styles_read_like_prose() {
        assert_eq!(
            parse_style("black on yellow bold").unwrap(),
            Style::default()
                .fg(Color::Black)
                .bg(Color::Yellow)
                .add_modifier(Modifier::BOLD)
        );
        assert_eq!(
            parse_style("#ff8800").unwrap(),
            Style::default().fg(Color::Rgb(255, 136, 0))
        );
        assert_eq!(parse_style("on"), Err(StyleError::OnWithoutColour));
        assert_eq!(
            parse_style("chartreuse-ish"),
            Err(StyleError::NotAColour("chartreuse-ish".into()))
        );
    }
}
