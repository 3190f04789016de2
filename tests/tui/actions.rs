//! The TUI's actions: read-only mode, confirmation and typed counts, deny rules and the bulk
//! limit, the audit view, and proposals approved or rejected.

use super::*;

#[test]
fn in_read_only_mode_action_keys_explain_how_to_enable_writes_and_do_nothing() {
    let (mut m, ..) = redis_detail_with(read_only());
    for code in ['s', 'r', 'R', 'W', 'F'] {
        let effects = keys(&mut m, KeyCode::Char(code));
        assert_eq!(effects, []);
        assert!(m.confirming().is_none());
        // The one guardrail's words, as every other front door says them.
        let flash = m.flash().unwrap_or_default();
        assert!(
            flash.starts_with("read-only: nothing can ") && flash.contains("--write"),
            "{flash}"
        );
    }
    for line in [
        "suspend",
        "resume",
        "reconcile",
        "reconcile --with-source",
        "force",
        "reset",
    ] {
        assert_eq!(command(&mut m, line), []);
        assert!(m.confirming().is_none(), ":{line}");
    }
    assert!(m.run().is_none());
}

#[test]
fn suspending_a_triage_group_asks_why_confirms_and_sends_one_job_for_its_clusters() {
    let mut m = model();
    key(&mut m, KeyCode::Char('t'));
    key(&mut m, KeyCode::Char('j'));
    m.refresh_rows();
    assert!(matches!(m.screen().selected, Some(RowId::Group(_))));
    assert_eq!(keys(&mut m, KeyCode::Char('s')), []);
    typed(&mut m, "flapping");
    insta::assert_snapshot!("confirm_suspend", common::tui::screen(&mut m, 100, 20));
    key(&mut m, KeyCode::Enter);
    let effects = keys(&mut m, KeyCode::Char('y'));
    let [Effect::Act(job)] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(job.intent().reason.as_deref(), Some("flapping"));
    assert_eq!(job.targets().len(), 2, "both clusters of the group");
    let clusters: std::collections::BTreeSet<_> = job.targets().iter().map(|t| t.cluster).collect();
    assert_eq!(clusters.len(), 2);
    for t in job.targets() {
        let steps = t.plan.as_ref().unwrap();
        assert_eq!(steps[0].patch["spec"]["suspend"], true);
    }
    assert_eq!(m.screen().view, View::Results);
    // Outcomes come back one by one.
    let first = &job.targets()[0];
    update(
        &mut m,
        Msg::Acted {
            run: job.run(),
            cluster: first.cluster,
            key: first.key.clone(),
            outcome: Outcome::Forbidden("no patch for you".into()),
        },
    );
    let run = m.run().unwrap();
    assert_eq!(
        run.rows[0].state,
        RunState::Ended(Outcome::Forbidden("no patch for you".into()))
    );
    assert_eq!(run.rows[1].state, RunState::Sending);
    // Retry (ctrl-r) offers the same action on what failed, and only that.
    update(
        &mut m,
        Msg::Key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL)),
    );
    let retry = m.confirming().expect("a confirmation");
    assert_eq!(retry.verb, Verb::Suspend);
    assert_eq!(retry.targets, [(first.cluster, first.key.clone())]);
}

#[test]
fn above_the_threshold_the_count_must_be_typed_and_a_reconcile_waits_for_the_watch() {
    let mut settings = Settings::default();
    settings.actions.confirm_above = 1;
    let mut m = model_with(settings);
    key(&mut m, KeyCode::Char('a'));
    typed(&mut m, "/podinfo");
    key(&mut m, KeyCode::Enter);
    assert_eq!(command(&mut m, "mark"), []);
    let marked = m.marks().len();
    assert!(marked >= 2, "{marked}");
    key(&mut m, KeyCode::Char('R'));
    assert_eq!(m.confirming().unwrap().stage, Stage::Count);
    typed(&mut m, "99");
    assert_eq!(keys(&mut m, KeyCode::Enter), []);
    assert!(m.confirming().is_some(), "a wrong count does not confirm");
    typed(&mut m, &marked.to_string());
    let effects = keys(&mut m, KeyCode::Enter);
    let [Effect::Act(job)] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert!(m.marks().is_empty(), "marks are used up");
    let target = job.targets().iter().find(|t| t.plan.is_ok()).unwrap();
    // The executor's word for a target: accepted (then requested), or how it ended.
    let done = || Msg::Acted {
        run: job.run(),
        cluster: target.cluster,
        key: target.key.clone(),
        outcome: Outcome::Done,
    };
    update(&mut m, done());
    let state = |m: &Model| {
        m.run()
            .unwrap()
            .rows
            .iter()
            .find(|r| r.cluster == target.cluster && r.key == target.key)
            .unwrap()
            .state
            .clone()
    };
    assert_eq!(state(&m), RunState::Requested);
    // The watch brings the object back with the token handled.
    let mut handled = FluxSummary::clone(
        m.index()
            .cluster(target.cluster)
            .unwrap()
            .objects
            .get(&target.key)
            .unwrap(),
    );
    handled.marks_mut().last_handled_reconcile_at = Some(job.intent().token.as_str().into());
    let effects = update(
        &mut m,
        Msg::Fleet(vec![event(target.cluster, Change::Applied(handled))]),
    );
    assert_eq!(state(&m), RunState::Handled);
    // The executor is told, so that the journal records when it was handled.
    assert_eq!(
        effects,
        [Effect::Handled {
            run: job.run(),
            cluster: target.cluster,
            key: target.key.clone(),
        }]
    );
    // Its "done" that follows leaves the row handled.
    update(&mut m, done());
    assert_eq!(state(&m), RunState::Handled);
    // The results view counts as the headless progress line does.
    let text = common::tui::screen(&mut m, 140, 30);
    let line = format!(
        "reconcile: 1/{} sent · 0 requested · 1 handled · 0 failed · 0 refused",
        job.targets().len()
    );
    assert!(text.contains(&line), "{text}");
}

#[test]
fn deny_rules_and_the_bulk_limit_hold_in_the_tui() {
    let mut settings = Settings::default();
    settings.actions.deny = vec![fluxfleet::config::DenyRule {
        origin: None,
        workspace: Some("pay*".into()),
        cluster: None,
        kind: Some("HelmRelease".into()),
        namespace: None,
        name: None,
    }];
    let (mut m, cluster, redis) = redis_detail_with(settings);
    // Every target refused: no confirmation, nothing sent, and the reason on screen.
    assert_eq!(keys(&mut m, KeyCode::Char('R')), []);
    assert!(m.confirming().is_none());
    let flash = m.flash().unwrap_or_default().to_string();
    assert!(
        flash.starts_with("nothing to reconcile: the object is refused"),
        "{flash}"
    );
    assert!(flash.contains("actions.deny[0]"), "{flash}");
    let _ = (cluster, redis);
    // Every object of a payments cluster marked: the confirmation counts the HelmReleases it
    // refuses apart from what it would send.
    key(&mut m, KeyCode::Esc);
    command(&mut m, "cluster pay-prod-eu");
    command(&mut m, "mark");
    let id = m.index().cluster_named("pay-prod-eu").unwrap();
    let releases = id
        .objects
        .keys()
        .filter(|k| k.kind == FluxKind::HelmRelease)
        .count();
    let others = id.objects.len() - releases;
    assert!(releases > 0 && others > 0);
    key(&mut m, KeyCode::Char('R'));
    let tally = m.confirming().expect("a confirmation").tally;
    assert_eq!((tally.sent, tally.refused), (others, releases));
    // More targets than allowed: refused before any confirmation.
    let mut m = model_with(one_target());
    key(&mut m, KeyCode::Char('a'));
    command(&mut m, "mark");
    assert!(m.marks().len() > 1);
    assert_eq!(keys(&mut m, KeyCode::Char('s')), []);
    assert!(m.confirming().is_none());
    // The one guardrail's words, as every other front door says them (tests/front_doors.rs).
    let refused = fluxfleet::actions::Refused::TooMany {
        count: m.marks().len(),
        max: 1,
    };
    assert_eq!(m.flash(), Some(refused.to_string().as_str()));
}

#[test]
fn the_audit_view_reads_the_journal_and_summarises_each_attempt() {
    let mut m = model();
    assert_eq!(command(&mut m, "audit"), [Effect::ReadAudit]);
    assert_eq!(m.screen().view, View::Audit);
    let line = |time: &str, action: &str, outcomes: &[&str], reason: Option<&str>| {
        let targets: Vec<Value> = outcomes
            .iter()
            .map(|o| serde_json::json!({"cluster": "pay-prod-us", "outcome": o}))
            .collect();
        serde_json::json!({"time": time, "user": "alice", "action": action,
            "reason": reason, "token": "t", "targets": targets})
        .to_string()
    };
    update(
        &mut m,
        Msg::Audit(Ok(vec![
            line(
                "2026-11-21T09:59:00Z",
                "reconcile",
                &["done", "forbidden"],
                None,
            ),
            line(
                "2026-11-21T09:00:00Z",
                "suspend",
                &["done", "done"],
                Some("flapping"),
            ),
        ])),
    );
    insta::assert_snapshot!("audit", common::tui::screen(&mut m, 100, 8));
}

#[test]
fn the_audit_view_shows_an_intent_without_outcomes_as_interrupted() {
    let mut m = model();
    command(&mut m, "audit");
    let line = |stage: &str, token: &str, outcome: &str| {
        serde_json::json!({"time": "2026-11-21T09:59:00Z", "stage": stage, "user": "alice",
            "action": "reconcile", "token": token,
            "targets": [{"cluster": "pay-prod-us", "outcome": outcome}]})
        .to_string()
    };
    // Newest first, as read from the journal: an interrupted attempt, then a finished one
    // (its outcomes above its intent).
    let journal = fluxfleet::audit::attempts(vec![
        line("intent", "t2", "intended"),
        line("outcome", "t1", "done"),
        line("intent", "t1", "intended"),
    ]);
    update(&mut m, Msg::Audit(Ok(journal)));
    let shown = common::tui::screen(&mut m, 120, 8);
    assert_eq!(shown.matches("alice reconcile").count(), 2, "{shown}");
    assert!(shown.contains("1 objects: 1 done"), "{shown}");
    assert!(
        shown.contains("no outcome recorded — still running, or interrupted"),
        "{shown}"
    );
}

/// A proposal for `verb` on `key` on `cluster` only, planned on the model's fleet as
/// `fluxfleet mcp --propose` plans it.
fn proposal_on(
    m: &Model,
    cluster: ClusterId,
    key: &ObjectKey,
    verb: Verb,
) -> fluxfleet::proposals::Proposal {
    let mut selection = selecting(key);
    selection.scope.clusters = vec![m.index().cluster(cluster).unwrap().info.name.clone()];
    proposal_of(m, selection, verb)
}

/// A read-only session's settings.
fn read_only() -> Settings {
    Settings {
        read_only: true,
        ..Settings::default()
    }
}

/// The settings of a session that may act on one target at a time.
fn one_target() -> Settings {
    let mut settings = Settings::default();
    settings.actions.max_targets = 1;
    settings
}

/// `key` on every cluster that has it.
fn selecting(key: &ObjectKey) -> fluxfleet::proposals::ProposalSelection {
    fluxfleet::proposals::ProposalSelection {
        scope: fluxfleet::fleet::scope::Scope {
            kind: Some(key.kind.to_string()),
            namespace: Some(key.namespace.to_string()),
            name: Some(key.name.to_string()),
            ..Default::default()
        },
        ..fluxfleet::proposals::ProposalSelection::default()
    }
}

/// What an assistant proposes for `selection`: planned through the one door as a preview.
fn proposal_of(
    m: &Model,
    selection: fluxfleet::proposals::ProposalSelection,
    verb: Verb,
) -> fluxfleet::proposals::Proposal {
    use fluxfleet::proposals::{Proposal, ProposalRequest};
    let objects = fluxfleet::fleet::filter::selected(m.index(), &selection.filter().unwrap());
    let intent = fluxfleet::fleet::verbs::Intent {
        verb,
        user: "alice".into(),
        reason: Some("freeze".into()).filter(|_| verb == Verb::Suspend),
        token: "2026-11-21T09:00:00Z".into(),
    };
    let rules = fluxfleet::actions::Rules {
        writes_refused: None,
        purpose: fluxfleet::actions::Purpose::Preview,
        actions: &m.settings().actions,
        permissions: None,
    };
    let ask = fluxfleet::actions::Ask {
        intent: intent.clone(),
        objects: fluxfleet::actions::Objects::Named(objects),
    };
    let admitted = fluxfleet::actions::admit(m.index(), ask, &rules).unwrap();
    let asked = ProposalRequest {
        proposed_by: "mcp:assistant".into(),
        why: Some("redis is stalled".into()),
        selection,
        expiry: std::time::Duration::from_secs(3600),
    };
    Proposal::new(&intent, admitted.targets(), asked, now())
}

#[test]
fn a_proposal_is_approved_only_as_proposed_and_rejected_with_a_reason() {
    use fluxfleet::proposals::Decision;
    let (mut m, cluster, redis) = redis_detail();
    let suspend = proposal_on(&m, cluster, &redis, Verb::Suspend);
    let reconcile = proposal_on(&m, cluster, &redis, Verb::Reconcile);
    assert_eq!(command(&mut m, "proposals"), [Effect::ReadProposals]);
    assert_eq!(m.screen().view, View::Proposals);
    update(
        &mut m,
        Msg::Proposals(Ok(vec![reconcile.clone(), suspend.clone()])),
    );
    let text = common::tui::screen(&mut m, 140, 30);
    assert!(
        text.contains(&reconcile.id) && text.contains("redis is stalled"),
        "{text}"
    );
    // Read-only: approving explains how to write, and nothing is asked.
    let (mut read_only, ..) = redis_detail_with(read_only());
    command(&mut read_only, "proposals");
    update(
        &mut read_only,
        Msg::Proposals(Ok(vec![reconcile.clone(), suspend.clone()])),
    );
    assert_eq!(keys(&mut read_only, KeyCode::Char('a')), []);
    let said = read_only.flash();
    assert!(said.unwrap().contains("--write"), "{said:?}");

    // The second row, the suspend: confirmed, it is sent with the proposal's own intent.
    key(&mut m, KeyCode::Char('j'));
    assert_eq!(keys(&mut m, KeyCode::Char('a')), []);
    let confirm = m.confirming().expect("a confirmation");
    assert_eq!(confirm.verb, Verb::Suspend);
    assert_eq!(confirm.stage, Stage::Yes, "the reason was proposed");
    let effects = keys(&mut m, KeyCode::Char('y'));
    let [Effect::Act(job)] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(job.intent(), &suspend.intent());
    let proposed = job.proposal().unwrap();
    assert_eq!(proposed.id, suspend.id);
    assert_eq!(proposed.proposed_by, "mcp:assistant");
    assert_eq!(proposed.approved_by, m.settings().user);

    // The object is suspended since the reconcile was proposed: approving it is refused,
    // recorded, and nothing is sent.
    let mut suspended = FluxSummary::clone(
        m.index()
            .cluster(cluster)
            .unwrap()
            .objects
            .get(&redis)
            .unwrap(),
    );
    suspended.suspended = true;
    update(
        &mut m,
        Msg::Fleet(vec![event(cluster, Change::Applied(suspended))]),
    );
    command(&mut m, "proposals");
    update(
        &mut m,
        Msg::Proposals(Ok(vec![reconcile.clone(), suspend.clone()])),
    );
    let effects = keys(&mut m, KeyCode::Char('a'));
    let [Effect::Decide { id, decision }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(id, &reconcile.id);
    let Decision::Refused { changed, .. } = decision else {
        panic!("{decision:?}")
    };
    assert!(changed[0].contains("would now refused"), "{changed:?}");
    assert!(m.confirming().is_none());
    assert!(
        m.flash().unwrap().contains("the fleet changed"),
        "{:?}",
        m.flash()
    );

    // x asks why, and the reason goes with the rejection.
    key(&mut m, KeyCode::Char('x'));
    assert_eq!(m.input(), &Input::Command("reject ".into()));
    typed(&mut m, "not during the freeze");
    let effects = keys(&mut m, KeyCode::Enter);
    let [Effect::Decide { id, decision }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(id, &reconcile.id);
    assert!(
        matches!(decision, Decision::Rejected { reason, .. } if reason == "not during the freeze"),
        "{decision:?}"
    );
    // An empty reason is not a rejection.
    assert_eq!(command(&mut m, "reject  "), []);
    assert!(m.flash().unwrap().contains("say why"), "{:?}", m.flash());
}

/// The TUI's approval is a front door like `fluxfleet approve`: a proposal over the approver's
/// `actions.max_targets` is refused in approve's words, before any confirmation, and stays
/// pending (no decision recorded).
#[test]
fn approving_a_proposal_over_the_limit_is_refused_as_approve_refuses_it() {
    // Proposed where more targets are allowed; approved where one is.
    let (proposer, _, redis) = redis_detail();
    let proposal = proposal_of(&proposer, selecting(&redis), Verb::Suspend);
    let count = proposal.targets.len();
    assert!(count > 1, "{:?}", proposal.targets);
    let (mut m, ..) = redis_detail_with(one_target());
    command(&mut m, "proposals");
    update(&mut m, Msg::Proposals(Ok(vec![proposal.clone()])));
    assert_eq!(keys(&mut m, KeyCode::Char('a')), [], "nothing decided");
    assert!(m.confirming().is_none());
    let approve_says = fluxfleet::acting::ActFailed::Refused {
        refused: fluxfleet::actions::Refused::TooMany { count, max: 1 },
        then: fluxfleet::actions::Unsent::Pending(proposal.id.clone()),
    };
    assert_eq!(m.flash(), Some(approve_says.to_string().as_str()));
}
