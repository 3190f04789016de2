//! Flux revisions, as the controllers write them: `main@sha1:2f22…`, `v1.2.0@sha1:…`,
//! `latest@sha256:…`, `sha256:…`, a chart version `6.7.1`, or with a Kustomization's origin
//! `main@sha1:…`. Compared exactly; shown short. The digest is what follows the last `@` (a
//! revision without `@` is all digest, or a plain version).

/// The digest of `revision`: what follows its last `@`, or all of it.
pub fn digest(revision: &str) -> &str {
    revision.rsplit_once('@').map_or(revision, |(_, d)| d)
}

/// The name part of `revision` (branch, tag), when it has one: what comes before the last `@`.
pub fn name(revision: &str) -> Option<&str> {
    revision
        .rsplit_once('@')
        .map(|(n, _)| n)
        .filter(|n| !n.is_empty())
}

/// `revision` for a column: hashes cut to their first 8 hex digits as `flux get` shows them
/// (`main@sha1:2f22765d`, `sha256:d0f631ca`), a chart version as it is.
pub fn short(revision: &str) -> String {
    crate::units::truncate_hex(revision)
}

/// Whether two revisions are the same one: exactly equal. A short form never equals a long one.
pub fn same(a: &str, b: &str) -> bool {
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIT: &str = "main@sha1:2f22765d04931a078909145ca628d2264c852d7d";
    const OCI: &str =
        "latest@sha256:d0f631ca1ddba8db3bcfcb9e057cdc98d0379f1bee00e75a545147a27dadd982";

    #[test]
    fn every_flux_revision_form_splits_and_shortens() {
        assert_eq!(digest(GIT), "sha1:2f22765d04931a078909145ca628d2264c852d7d");
        assert_eq!(name(GIT), Some("main"));
        assert_eq!(short(GIT), "main@sha1:2f22765d");
        assert_eq!(short(OCI), "latest@sha256:d0f631ca");
        let tag = "v1.2.0@sha1:ce9ed66d82df7ce028a8623498350e2fb4412132";
        assert_eq!(name(tag), Some("v1.2.0"));
        assert_eq!(short(tag), "v1.2.0@sha1:ce9ed66d");
        let bare = "sha256:9c0abe51c6e6655d81de2d044d4fb194931f058c0426c67c7285d8f5657ed64a";
        assert_eq!(digest(bare), bare);
        assert_eq!(name(bare), None);
        assert_eq!(short("6.7.1"), "6.7.1");
        // A branch with an `@` in it: the digest follows the last one.
        assert_eq!(digest("feat@x@sha1:abc"), "sha1:abc");
        assert!(same(GIT, GIT) && !same(GIT, &short(GIT)));
    }
}
