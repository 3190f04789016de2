//! A cluster's connection derived from where each kind's watch stands.

use super::*;

#[test]
fn a_cluster_is_live_only_when_every_kind_is_and_forbidden_kinds_are_named() {
    let ks = FluxKind::Kustomization;
    let hr = FluxKind::HelmRelease;
    let live = derive(&[(ks, KindState::Live), (hr, KindState::Live)]);
    assert_eq!(live.phase, Phase::Live);
    let syncing = derive(&[(ks, KindState::Live), (hr, KindState::Listing)]);
    assert_eq!(syncing.phase, Phase::Syncing);
    let partial = derive(&[
        (ks, KindState::Live),
        (hr, KindState::Forbidden("403".into())),
    ]);
    assert_eq!(partial.phase, Phase::Live);
    assert_eq!(&*partial.forbidden, [hr]);
    assert!(
        partial
            .error
            .unwrap()
            .contains("forbidden to list HelmRelease")
    );
    let all = derive(&[(ks, KindState::Forbidden("403 Forbidden: no".into()))]);
    assert_eq!(all.phase, Phase::Forbidden);
    let failing = derive(&[
        (
            ks,
            KindState::Failed(Box::new((
                Failure::new(Phase::ServerError, "503"),
                Timestamp::UNIX_EPOCH,
            ))),
        ),
        (hr, KindState::Live),
    ]);
    assert_eq!(failing.phase, Phase::ServerError);
    assert_eq!(failing.retry_at, Some(Timestamp::UNIX_EPOCH));
}
