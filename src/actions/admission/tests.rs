use super::*;

#[test]
fn writes_are_refused_unreadable_first_then_read_only() {
    let verb = Verb::Suspend;
    assert_eq!(
        may_write(Some("config.toml: line 3: bad"), true, verb),
        Err(Refused::Unreadable {
            verb,
            why: "config.toml: line 3: bad".into()
        })
    );
    assert_eq!(
        may_write(Some("bad"), false, verb).map_err(|r| r.to_string()),
        Err("nothing can suspend: bad".into())
    );
    assert_eq!(
        may_write(None, false, verb),
        Err(Refused::ReadOnly { verb })
    );
    assert_eq!(may_write(None, true, verb), Ok(()));
}

fn actions(max_targets: usize) -> config::Actions {
    config::Actions {
        concurrency: 8,
        confirm_above: 2,
        max_targets,
        deny: vec![],
        events: true,
        flux_verbs: config::FluxVerbs::Off,
        flux_verbs_rules: vec![],
    }
}

fn rules(actions: &config::Actions, purpose: Purpose) -> Rules<'_> {
    Rules {
        writes_refused: None,
        purpose,
        actions,
        permissions: None,
    }
}

fn intent(verb: Verb) -> Intent {
    Intent {
        verb,
        user: "me".into(),
        reason: None,
        token: "t".into(),
    }
}

#[test]
fn a_selection_naming_no_place_needs_all_and_kind_or_status_are_not_places() {
    let index = Index::default();
    let actions = actions(10);
    let rules = rules(&actions, Purpose::Preview);
    let ask = |filter: Filter, all: bool| Ask {
        intent: intent(Verb::Suspend),
        objects: Objects::Selected { filter, all },
    };
    let kind_only = Filter {
        kind: Some(crate::fleet::FluxKind::Kustomization),
        status: Some(crate::fleet::filter::StatusFilter::Failing),
        ..Filter::default()
    };
    assert_eq!(
        admit(&index, ask(kind_only.clone(), false), &rules),
        Err(Refused::Unscoped {
            verb: Verb::Suspend
        })
    );
    // Scoped: on to the fleet, where nothing matches.
    assert_eq!(
        admit(&index, ask(kind_only.clone(), true), &rules),
        Err(Refused::NoMatch)
    );
    for placed in [
        Filter {
            workspace: Some("dev".into()),
            ..kind_only.clone()
        },
        Filter {
            clusters: vec!["*-dev-*".into()],
            ..kind_only.clone()
        },
        Filter {
            namespace: Some("apps".into()),
            ..kind_only.clone()
        },
        Filter {
            name: Some("apps".into()),
            ..kind_only.clone()
        },
    ] {
        assert_eq!(
            admit(&index, ask(placed, false), &rules),
            Err(Refused::NoMatch)
        );
    }
}

/// The order: unreadable, read-only, unscoped, nothing, too many — each refusal before the
/// next is looked at; a preview is never refused for the mode, and never becomes a job.
#[test]
fn the_door_refuses_in_one_order_and_a_preview_is_never_sent() {
    let index = Index::default();
    let actions = actions(2);
    let key = ObjectKey::new(crate::fleet::FluxKind::Kustomization, "ns", "apps");
    let three: Vec<_> = (0..3).map(|i| (ClusterId(i), key.clone())).collect();
    let unscoped = Ask {
        intent: intent(Verb::Reconcile),
        objects: Objects::Selected {
            filter: Filter::default(),
            all: false,
        },
    };
    let named = |objects: Vec<_>| Ask {
        intent: intent(Verb::Reconcile),
        objects: Objects::Named(objects),
    };
    let unreadable = Rules {
        writes_refused: Some("config.toml: line 3: bad"),
        ..rules(&actions, Purpose::Send { granted: true })
    };
    let refused = admit(&index, unscoped.clone(), &unreadable);
    assert_eq!(
        refused.map_err(|r| r.to_string()),
        Err("nothing can reconcile: config.toml: line 3: bad".into())
    );
    let read_only = rules(&actions, Purpose::Send { granted: false });
    assert_eq!(
        admit(&index, unscoped.clone(), &read_only),
        Err(Refused::ReadOnly {
            verb: Verb::Reconcile
        })
    );
    let granted = rules(&actions, Purpose::Send { granted: true });
    assert_eq!(
        admit(&index, unscoped.clone(), &granted),
        Err(Refused::Unscoped {
            verb: Verb::Reconcile
        })
    );
    assert_eq!(
        admit(&index, named(vec![]), &granted),
        Err(Refused::NoMatch)
    );
    let refused = admit(&index, named(three.clone()), &granted);
    assert_eq!(refused, Err(Refused::TooMany { count: 3, max: 2 }));
    assert_eq!(
        refused.map_err(|r| r.to_string()),
        Err("3 objects match, more than the 2 allowed at once (actions.max_targets): narrow the scope".into())
    );
    // Too many is too many whatever the door: a preview too.
    let preview = rules(&actions, Purpose::Preview);
    assert_eq!(
        admit(&index, named(three.clone()), &preview),
        Err(Refused::TooMany { count: 3, max: 2 })
    );
    // Two (of clusters this index does not have: nothing to send) are admitted; as a
    // preview they can never be sent.
    let two = three[..2].to_vec();
    let admitted = admit(&index, named(two.clone()), &preview).unwrap();
    assert_eq!(admitted.tally().sent, 0);
    assert_eq!(admitted.confirmation(), Confirmation::Yes);
    assert_eq!(
        admitted.into_job(1, None).map(|_| ()),
        Err(Refused::ReadOnly {
            verb: Verb::Reconcile
        })
    );
    assert!(
        admit(&index, named(two), &granted)
            .unwrap()
            .into_job(1, None)
            .is_ok()
    );
}
