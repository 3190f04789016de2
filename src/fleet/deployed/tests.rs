use super::*;

fn text(t: &str) -> Option<SharedText> {
    Some(t.into())
}

/// Every field said, as a HelmRelease's rollout says them.
fn helm_release() -> Rollout {
    Rollout {
        applied: text("6.7.1"),
        attempted: text("6.7.2"),
        previous: text("6.7.0"),
        since: "2026-07-30T12:01:44Z".parse().ok(),
        pace: Pace {
            took_ms: Some(1200),
            interval_s: Some(600),
            failed: true,
            ..Pace::default()
        },
        proven: true,
        helm: HelmRollout {
            chart: text("podinfo"),
            config_digest: text("sha256:e788"),
            drifted: text("ConfigMap/default/hello changed"),
            tried_values: text("sha256:7e1f"),
            released_values: text("sha256:e788"),
        }
        .boxed(),
        ..Rollout::default()
    }
}

/// A Kustomization's: no part of a HelmRelease's, and no box for it.
fn kustomization() -> Rollout {
    Rollout {
        applied: text("main@sha1:4f0c1a2b"),
        attempted: text("main@sha1:9d3e5f60"),
        origin: text("main@sha1:0a1b2c3d"),
        digest: text("sha256:a1b2"),
        previous: text("main@sha1:77aa88bb"),
        since: "2026-07-30T12:00:00Z".parse().ok(),
        pace: Pace {
            ran_at: Some(1_785_412_800),
            flapping: true,
            ..Pace::default()
        },
        ..Rollout::default()
    }
}

/// `get -o json`, MCP and the bus carry a rollout as one flat object, its fields in the order
/// they had while a HelmRelease's own were inline: written the same to the byte, read back the
/// same.
#[test]
fn a_rollout_is_written_as_before_and_reads_back_unchanged() {
    let cases = [
        (
            helm_release(),
            concat!(
                r#"{"applied":"6.7.1","attempted":"6.7.2","chart":"podinfo","#,
                r#""configDigest":"sha256:e788","previous":"6.7.0","#,
                r#""since":"2026-07-30T12:01:44Z","drifted":"ConfigMap/default/hello changed","#,
                r#""pace":{"tookMs":1200,"intervalS":600,"failed":true},"proven":true,"#,
                r#""triedValues":"sha256:7e1f","releasedValues":"sha256:e788"}"#
            ),
        ),
        (
            kustomization(),
            concat!(
                r#"{"applied":"main@sha1:4f0c1a2b","attempted":"main@sha1:9d3e5f60","#,
                r#""origin":"main@sha1:0a1b2c3d","digest":"sha256:a1b2","#,
                r#""previous":"main@sha1:77aa88bb","since":"2026-07-30T12:00:00Z","#,
                r#""pace":{"ranAt":1785412800,"flapping":true}}"#
            ),
        ),
        (Rollout::default(), "{}"),
    ];
    for (rollout, json) in cases {
        assert_eq!(serde_json::to_string(&rollout).ok().as_deref(), Some(json));
        let back: Option<Rollout> = serde_json::from_str(json).ok();
        assert_eq!(back.as_ref(), Some(&rollout), "{json}");
    }
    assert!(kustomization().helm.is_none());
}

/// A HelmRelease's values last released, no longer in its status, are kept from its previous
/// summary; nothing is boxed for a kind that has none.
#[test]
fn the_values_released_are_carried_into_the_helm_part() {
    let mut new = helm_release();
    new.helm = HelmRollout {
        released_values: None,
        ..new.helm().clone()
    }
    .boxed();
    new.carry(&helm_release());
    assert_eq!(new, helm_release());
    let mut bare = Rollout::default();
    bare.carry(&helm_release());
    assert_eq!(bare.helm().released_values, text("sha256:e788"));
    let mut k = kustomization();
    k.carry(&kustomization());
    assert!(k.helm.is_none());
}
