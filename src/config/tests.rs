use super::*;
use crate::fleet::FluxKind;
use std::time::Duration;

#[test]
fn the_embedded_defaults_parse_cleanly_and_match_the_fallback() {
    let (config, warnings) = Config::parse(None, Path::new("default.toml"));
    assert_eq!(warnings, []);
    assert!(config.keymap.contains_key("global"));
    // The fallback ships no plugins: they are tested in `app::plugins`.
    assert!(!config.plugins.is_empty());
    let config = Config {
        keymap: toml::Table::new(),
        plugins: Vec::new(),
        ..config
    };
    assert_eq!(config, Config::fallback());
}

#[test]
fn a_user_file_overrides_only_what_it_names() {
    let text = "[engine]\nconnect_concurrency = 8\n[[sources]]\ndir = \"/fleet\"\n";
    let (config, warnings) = Config::parse(Some(text), Path::new("user.toml"));
    assert_eq!(warnings, []);
    assert_eq!(config.engine.connect_concurrency, 8);
    assert_eq!(config.engine.kinds.len(), 7);
    assert_eq!(config.sources[0].dir.as_deref(), Some(Path::new("/fleet")));
}

#[test]
fn bad_values_are_warnings_naming_file_and_key_and_defaults_stand_in() {
    let text =
        "[engine]\nconnect_timeout = \"soon\"\nkinds = [\"Kustomization\", \"Deployment\"]\n";
    let (config, warnings) = Config::parse(Some(text), Path::new("/home/me/fluxfleet.toml"));
    let text: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    assert_eq!(text.len(), 2, "{text:?}");
    assert!(text[0].starts_with("/home/me/fluxfleet.toml: engine.connect_timeout"));
    assert!(text[1].contains("\"Deployment\" is not a Flux kind"));
    assert_eq!(config.engine.connect_timeout, Duration::from_secs(15));
    assert_eq!(config.engine.kinds, [FluxKind::Kustomization]);
}

#[test]
fn rings_and_stuck_rules_are_read_and_a_bad_duration_falls_back() {
    let text = "[rollout]\nrings = [\"dev-*\", \"prod-*\"]\nring_label = \"ring\"\n\
                stuck_after = \"2h\"\nmax_behind = 4\n";
    let (config, warnings) = Config::parse(Some(text), Path::new("user.toml"));
    assert_eq!(warnings, []);
    let r = &config.rollout;
    assert_eq!(r.rings.patterns, ["dev-*", "prod-*"]);
    assert_eq!(r.rings.label.as_deref(), Some("ring"));
    assert_eq!(r.rules.stuck_after, jiff::SignedDuration::from_hours(2));
    assert_eq!(r.rules.max_behind, 4);

    let (config, warnings) = Config::parse(
        Some("[rollout]\nstuck_after = \"a while\"\n"),
        Path::new("user.toml"),
    );
    assert!(
        warnings[0].message.starts_with("rollout.stuck_after"),
        "{warnings:?}"
    );
    assert_eq!(config.rollout, Config::defaults().rollout);
    assert_eq!(config.rollout.rings.label, None);
}

#[test]
fn a_bad_key_is_dropped_alone_and_a_bad_guardrail_refuses_writes() {
    // An unknown engine key: warned with its line, the rest of the file applies.
    let text = "[engine]\nchunk_size = 100\nturbo = true\n[ui]\nmode = \"write\"\n";
    let (config, warnings) = Config::parse(Some(text), Path::new("u.toml"));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let warning = warnings[0].to_string();
    assert!(
        warning.starts_with("u.toml: line 3: engine.turbo: unknown field"),
        "{warning}"
    );
    assert_eq!(config.engine.chunk_size, 100);
    assert_eq!(config.ui.mode, Mode::Write);
    assert_eq!(config.guardrail_problems, Vec::<String>::new());

    // A typo next to a deny rule: the deny rule stays, and writes are refused.
    let text = "[ui]\nmode = \"write\"\n[actions]\nconfirm_abve = 3\nmax_targets = 7\n\
                [[actions.deny]]\nkind = \"Kustomization\"\n";
    let (config, warnings) = Config::parse(Some(text), Path::new("u.toml"));
    let all: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    assert_eq!(all.len(), 1, "{all:?}");
    assert!(
        all[0].contains("line 4: actions.confirm_abve: unknown field"),
        "{all:?}"
    );
    assert!(
        all[0].contains("writes are refused until it is fixed"),
        "{all:?}"
    );
    assert_eq!(config.actions.deny.len(), 1, "the deny rule still applies");
    assert_eq!(config.actions.max_targets, 7);
    assert!(config.writes_refused().unwrap().contains("confirm_abve"));

    // A bad [[modes]] entry is dropped alone and refuses writes; a good one stays.
    let text =
        "[[modes]]\ncluster = \"a\"\nmode = \"write\"\n[[modes]]\ncluster = \"b\"\nmode = \"rw\"\n";
    let (config, warnings) = Config::parse(Some(text), Path::new("u.toml"));
    assert_eq!(config.modes.len(), 1);
    assert!(
        warnings[0].message.starts_with("line 4: modes[1]:"),
        "{warnings:?}"
    );
    assert!(config.writes_refused().is_some());

    // A section fluxfleet does not know may be a misspelt guardrail: writes are refused.
    let (config, warnings) = Config::parse(Some("[acions]\nmax_targets = 1\n"), Path::new("u"));
    assert!(
        warnings[0].message.contains("[acions]: not a section"),
        "{warnings:?}"
    );
    assert!(config.writes_refused().is_some());

    // A file that is not TOML at all: the defaults, and writes refused.
    let (config, warnings) = Config::parse(Some("[engine\n"), Path::new("u"));
    assert!(warnings[0].message.starts_with("invalid TOML"));
    assert_eq!(
        config,
        Config {
            guardrail_problems: vec!["u is not valid TOML".into()],
            ..Config::defaults()
        }
    );
}

#[test]
fn an_explicit_missing_file_is_reported() {
    let (_, warnings) = Config::load(Some(Path::new("/nonexistent/fluxfleet.toml")), true);
    assert_eq!(warnings.len(), 1);
    let (_, warnings) = Config::load(Some(Path::new("/nonexistent/fluxfleet.toml")), false);
    assert_eq!(warnings, []);
}

#[test]
fn the_watch_mode_summarizes_above_its_threshold_and_a_bad_one_is_a_warning() {
    let defaults = Config::defaults().engine;
    assert_eq!(defaults.watch, WatchMode::Auto);
    // One decision for the engine and a reader of the bus: past the threshold the engine
    // summarizes; the bus, whose objects are collected already, only where counts suffice.
    let (kube, bus, counts) = (
        Reading::Clusters,
        Reading::Bus {
            counts_suffice: false,
        },
        Reading::Bus {
            counts_suffice: true,
        },
    );
    assert!(!defaults.summarizes(5_000, kube));
    assert!(defaults.summarizes(5_001, kube));
    assert!(!defaults.summarizes(5_001, bus));
    assert!(defaults.summarizes(5_001, counts));
    assert!(!defaults.summarizes(5_000, counts));
    let with = |watch| EngineSection {
        watch,
        ..defaults.clone()
    };
    for reading in [kube, bus, counts] {
        assert!(
            with(WatchMode::Summary).summarizes(1, reading),
            "{reading:?}"
        );
        assert!(
            !with(WatchMode::All).summarizes(100_000, reading),
            "{reading:?}"
        );
    }
    let text = "[engine]\nwatch = \"summary\"\nwarm_clusters = 4\nreport_interval = \"2m\"\n";
    let (config, warnings) = Config::parse(Some(text), Path::new("u.toml"));
    assert_eq!(warnings, []);
    assert_eq!(config.engine.watch, WatchMode::Summary);
    assert_eq!(config.engine.warm_clusters, 4);
    assert_eq!(config.engine.report_interval, Duration::from_secs(120));
    let text = "[engine]\nwatch = \"some\"\nreport_interval = \"0s\"\nwarm_clusters = 0\n";
    let (config, warnings) = Config::parse(Some(text), Path::new("u.toml"));
    let text: Vec<String> = warnings.iter().map(ToString::to_string).collect();
    assert_eq!(text.len(), 3, "{text:?}");
    assert!(
        text.iter()
            .any(|w| w.contains("engine.watch: \"some\" is not one of all, summary, auto"))
    );
    assert_eq!(config.engine.watch, WatchMode::Auto);
    assert_eq!(config.engine.report_interval, Duration::from_secs(60));
    assert_eq!(config.engine.warm_clusters, 16);
}
