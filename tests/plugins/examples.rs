//! The plugin examples of docs/tui.md read cleanly.

use fluxfleet::app::keymap::Keymap;
use fluxfleet::app::plugins;
use fluxfleet::config::Config;

#[test]
fn the_documented_plugin_examples_read_cleanly() {
    let readme =
        std::fs::read_to_string(format!("{}/docs/tui.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let examples: Vec<&str> = readme
        .split("```toml")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .filter(|block| block.contains("[[plugins]]"))
        .collect();
    assert!(!examples.is_empty());
    for example in examples {
        let (config, warnings) = Config::parse(Some(example), std::path::Path::new("docs/tui.md"));
        assert_eq!(warnings, [], "{example}");
        let added: Vec<_> = config
            .plugins
            .iter()
            .filter(|p| example.contains(&format!("name = {:?}", p.name)))
            .cloned()
            .collect();
        assert_eq!(added.len(), 2, "{example}");
        let (_, warnings) = plugins::from_config(&added, None);
        assert_eq!(warnings, Vec::<String>::new());
        let (mut keymap, _) = Keymap::from_config(&config.keymap);
        let with_paths: Vec<_> = plugins::from_config(&added, None)
            .0
            .into_iter()
            .map(|p| plugins::Plugin { missing: None, ..p })
            .collect();
        assert_eq!(
            plugins::bind(&mut keymap, &with_paths),
            Vec::<String>::new()
        );
    }
}
