//! Halting a rollout from its matrix in the live TUI, and resuming the halt.

use super::*;

/// A rollout halted from its matrix reaches exactly the clusters the newest revision has not
/// (journaled with its reason), and resuming the halt undoes exactly that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn halting_a_rollout_suspends_where_it_has_not_arrived_and_resuming_undoes_it() {
    let sim = common::start().await;
    let (mut config, inventory) = fleet(&sim);
    // Each workspace a ring: half of them already run the newest revisions.
    config.rollout.rings.patterns = Vec::new();
    let clusters = inventory.clusters.len();
    let copies = || {
        common::copies_of(&sim, ("Kustomization", "flux-system", "flux-system"))
            .into_iter()
            .map(|(cluster, _, o)| (cluster, o))
            .collect::<Vec<_>>()
    };
    let before = copies();
    let data = tempfile::tempdir().unwrap();
    let journal = data.path().join("audit.jsonl");
    let (mut person, app, _) = session(config, inventory, Some(Mode::Write), Some(journal.clone()));
    let drive = async {
        person
            .in_the_matrix(clusters, "flux-system", "flux-system")
            .await;
        person.press(KeyCode::Char('H'));
        let screen = person
            .sees("the halt's confirmation", |s| s.contains("<y> to confirm"))
            .await;
        assert!(screen.contains("halted rollout of"), "{screen}");
        let newest: String = screen
            .split("halted rollout of ")
            .nth(1)
            .unwrap()
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
            .collect();
        let halting: Vec<&String> = before
            .iter()
            .filter(|(_, o)| o.applied.as_deref() != Some(newest.as_str()) && !o.suspended)
            .map(|(c, _)| c)
            .collect();
        person.press(KeyCode::Char('y'));
        person.sees("the halt done", |s| s.contains(" done")).await;
        person.press(KeyCode::Esc);
        // As a person would, resume once the matrix shows every halted copy suspended: the
        // resume looks for what the view shows suspended by the halt.
        person
            .sees("every halted copy suspended", |s| {
                halting.iter().all(|c| {
                    s.lines()
                        .any(|l| l.contains(c.as_str()) && l.contains("suspended"))
                })
            })
            .await;
        person.press(KeyCode::Char('U'));
        person
            .sees("the resume's confirmation", |s| {
                s.contains("<y> to confirm")
            })
            .await;
        person.press(KeyCode::Char('y'));
        person
            .sees("the resume done", |s| {
                s.contains(" done") || s.contains("handled")
            })
            .await;
        person.press(KeyCode::Char('q'));
    };
    let (result, ()) = tokio::join!(app, drive);
    result.unwrap();
    // The journal: one halt, on the copies not on the newest revision, with its reason; then
    // one resume of exactly those.
    let lines = journaled(&journal, 2).await;
    let outcome = |action: &str| {
        lines
            .iter()
            .find(|l| l["action"] == action && l["stage"] == "outcome")
            .unwrap_or_else(|| panic!("{action} in {lines:#?}"))
            .clone()
    };
    let halt = outcome("suspend");
    let reason = halt["reason"].as_str().unwrap().to_string();
    let newest = reason
        .strip_prefix("halted rollout of ")
        .unwrap()
        .to_string();
    let halted: std::collections::BTreeSet<String> = halt["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["cluster"].as_str().unwrap().to_string())
        .collect();
    let expected: std::collections::BTreeSet<String> = before
        .iter()
        .filter(|(_, o)| o.applied.as_deref() != Some(newest.as_str()) && !o.suspended)
        .map(|(c, _)| c.clone())
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(halted, expected, "{halt:#}");
    let resumed: std::collections::BTreeSet<String> = outcome("resume")["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["cluster"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(resumed, halted);
    // On the clusters: nothing left suspended by the halt.
    assert!(
        copies()
            .iter()
            .all(|(c, o)| !halted.contains(c) || !o.suspended)
    );
}
