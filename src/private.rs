//! Files only their owner may read: the audit journal and the TUI's log name clusters, servers,
//! users and objects.

use std::fs::File;
use std::path::Path;

/// Opens `path` for appending, owner-only (0600) in an owner-only directory (0700) when it
/// creates them; a file an older version created readable by others is made owner-only.
pub fn append(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    owner_only_dir(path)?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    Ok(file)
}

/// Creates `path` owner-only (0600, in an owner-only directory) only if nothing is there yet:
/// `AlreadyExists` otherwise. What two processes race for, exactly one of them gets.
pub fn create_new(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    owner_only_dir(path)?;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

/// Replaces `path` with `bytes` at once: written owner-only beside it, then renamed over it, so a
/// reader sees the old file or the new one, never half of one.
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    owner_only_dir(path)?;
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.tmp", std::process::id()));
    let temporary = path.with_file_name(name);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)
}

fn owner_only_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match path.parent() {
        Some(dir) => std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir),
        None => Ok(()),
    }
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

    #[test]
    fn only_one_creation_wins_and_a_replacement_is_whole_and_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let claim = dir.path().join("proposals/p-1.decided");
        create_new(&claim).unwrap();
        let again = create_new(&claim).unwrap_err();
        assert_eq!(again.kind(), std::io::ErrorKind::AlreadyExists);
        let file = dir.path().join("proposals/p-1.json");
        replace(&file, b"first").unwrap();
        replace(&file, b"second").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "second");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let names: Vec<_> = std::fs::read_dir(dir.path().join("proposals"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 2, "no temporary file left: {names:?}");
    }
}
