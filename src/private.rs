//! Files only their owner may read: the audit journal and the TUI's log name clusters, servers,
//! users and objects.

use std::fs::File;
use std::path::Path;

/// Opens `path` for appending, owner-only (0600) in an owner-only directory (0700) when it
/// creates them; a file an older version created readable by others is made owner-only.
pub fn append(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn new_and_old_files_end_up_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("state/fluxfleet/fluxfleet.log");
        append(&fresh).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&fresh), 0o600);
        assert_eq!(mode(fresh.parent().unwrap()), 0o700);
        let old = dir.path().join("old.log");
        std::fs::write(&old, "earlier lines\n").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
        use std::io::Write;
        append(&old).unwrap().write_all(b"more\n").unwrap();
        assert_eq!(mode(&old), 0o600);
        assert_eq!(
            std::fs::read_to_string(&old).unwrap(),
            "earlier lines\nmore\n"
        );
    }
}
