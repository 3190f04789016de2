//! Where fluxfleet keeps its files, found in one place: the config file (`FLUXFLEET_CONFIG`,
//! else the platform's config directory; user themes beside it in `themes/`), the journal
//! (`FLUXFLEET_DATA_DIR`, else the platform's data directory) and the TUI's log (the platform's
//! state directory).

use std::path::PathBuf;

fn project() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("dev", "fluxfleet", "fluxfleet")
}

/// The user's config file: `FLUXFLEET_CONFIG`, else `config.toml` in the platform config
/// directory.
pub fn config_file() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FLUXFLEET_CONFIG") {
        return Some(PathBuf::from(p));
    }
    project().map(|d| d.config_dir().join("config.toml"))
}

/// The journal of actions: `audit.jsonl` in `FLUXFLEET_DATA_DIR`, else in the platform data
/// directory.
pub fn journal() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("FLUXFLEET_DATA_DIR") {
        return Some(PathBuf::from(dir).join("audit.jsonl"));
    }
    project().map(|d| d.data_dir().join("audit.jsonl"))
}

/// Where proposals are kept: `proposals/` beside the journal.
pub fn proposals() -> Option<PathBuf> {
    journal().and_then(|j| j.parent().map(|dir| dir.join("proposals")))
}

/// The TUI's log: `fluxfleet.log` in the platform state directory (the local data directory
/// where a platform has none).
pub fn log_file() -> Option<PathBuf> {
    let dirs = project()?;
    Some(
        dirs.state_dir()
            .unwrap_or(dirs.data_local_dir())
            .join("fluxfleet.log"),
    )
}
