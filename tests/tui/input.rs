//! Typing in the TUI: the fuzzy filter, commands and their completion, help from the keymap in
//! effect, and the selection kept on its object and in sight.

use super::*;

#[test]
fn the_fuzzy_filter_narrows_rows_and_esc_clears_it() {
    let mut m = model();
    key(&mut m, KeyCode::Char(':'));
    typed(&mut m, "ks");
    key(&mut m, KeyCode::Enter);
    assert_eq!(
        m.screen().view,
        View::Objects {
            scope: fluxfleet::app::model::ListScope::Fleet,
            kind: Some(FluxKind::Kustomization)
        }
    );
    m.refresh_rows();
    assert_eq!(m.rows().ids.len(), 6);
    key(&mut m, KeyCode::Char('/'));
    typed(&mut m, "payapps");
    assert_eq!(m.input(), &Input::Filter);
    m.refresh_rows();
    assert_eq!(
        m.rows().ids.len(),
        2,
        "pay-prod-eu/apps and pay-prod-us/apps"
    );
    insta::assert_snapshot!("objects_filtered", common::tui::screen(&mut m, 120, 12));
    key(&mut m, KeyCode::Enter);
    assert_eq!(m.input(), &Input::None);
    key(&mut m, KeyCode::Esc);
    m.refresh_rows();
    assert_eq!(
        m.rows().ids.len(),
        6,
        "esc clears the filter before going back"
    );
    // Failing only.
    key(&mut m, KeyCode::Char('!'));
    m.refresh_rows();
    assert_eq!(m.rows().ids.len(), 2);
}

#[test]
fn the_selection_stays_on_its_object_while_rows_change_around_it() {
    let mut m = model();
    update(
        &mut m,
        Msg::Key(KeyEvent::new(KeyCode::Char(':'), KeyModifiers::NONE)),
    );
    typed(&mut m, "all");
    key(&mut m, KeyCode::Enter);
    m.refresh_rows();
    for _ in 0..7 {
        key(&mut m, KeyCode::Char('j'));
    }
    let chosen = m.screen().selected.clone().unwrap();
    // The first cluster loses its Kustomizations: two rows above the selection disappear.
    update(
        &mut m,
        Msg::Fleet(vec![event(
            ClusterId(0),
            Change::Replaced(FluxKind::Kustomization, vec![]),
        )]),
    );
    m.refresh_rows();
    assert_eq!(m.screen().selected.as_ref(), Some(&chosen));
    assert_eq!(m.rows().ids.get(m.screen().cursor), Some(&chosen));
}

#[test]
fn help_is_generated_from_the_keymap_in_effect_and_warnings_show() {
    let mut table = Config::defaults().keymap;
    let user: toml::Table = "[global]\nquit = \"x\"\nteleport = \"T\"\n"
        .parse()
        .unwrap();
    for (k, v) in user {
        if let (Some(t), toml::Value::Table(v)) =
            (table.get_mut(&k).and_then(|t| t.as_table_mut()), v)
        {
            t.extend(v);
        }
    }
    let (keymap, warnings) = Keymap::from_config(&table);
    let (index, events) = fleet();
    let mut m = Model::new(index, keymap, warnings, now());
    update(&mut m, Msg::Fleet(events));
    key(&mut m, KeyCode::Char('?'));
    let text = common::tui::screen(&mut m, 100, 40);
    assert!(text.contains(&format!("{:<18}quit", "x")), "{text}");
    assert!(
        text.contains("keymap.global.teleport: not an action"),
        "{text}"
    );
    insta::assert_snapshot!("help_fleet", text);
    key(&mut m, KeyCode::Char('q'));
    assert!(!m.quitting(), "q is no longer quit");
    key(&mut m, KeyCode::Char('x'));
    assert!(m.quitting());
}

#[test]
fn unknown_commands_and_names_say_so() {
    let mut m = model();
    key(&mut m, KeyCode::Char(':'));
    typed(&mut m, "ws nowhere");
    key(&mut m, KeyCode::Enter);
    assert_eq!(m.flash(), Some("no workspace \"nowhere\""));
    key(&mut m, KeyCode::Char(':'));
    typed(&mut m, "ws ret");
    key(&mut m, KeyCode::Tab);
    assert_eq!(m.input(), &Input::Command("ws retail".into()));
    key(&mut m, KeyCode::Enter);
    assert!(matches!(m.screen().view, View::Workspace(_)));
    key(&mut m, KeyCode::Char(':'));
    typed(&mut m, "bogus");
    key(&mut m, KeyCode::Enter);
    assert!(m.flash().unwrap().contains("unknown command :bogus"));
}

#[test]
fn the_selection_stays_in_sight_in_a_short_terminal() {
    let mut m = model();
    key(&mut m, KeyCode::Enter);
    key(&mut m, KeyCode::Enter);
    // The cluster view spends a line on the connection: its table is shorter than other lists.
    key(&mut m, KeyCode::Char('G'));
    let text = common::tui::screen(&mut m, 100, 11);
    assert!(text.contains("redis"), "{text}");
}
