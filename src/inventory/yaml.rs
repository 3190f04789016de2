//! A kubeconfig file read as kube reads it (`Kubeconfig::read_from`: every YAML document
//! merged, relative file paths made absolute against the file's folder), with a YAML budget that
//! grows with the file. kube's default budget (250,000 nodes) refuses a kubeconfig of 10,000
//! contexts, which kubectl reads; every node takes at least a byte, so a budget in proportion to
//! the bytes bounds the work as well, and the bytes are capped first, as every untrusted input.

use std::path::Path;

use kube::config::Kubeconfig;

/// The largest kubeconfig file read: 20,000 contexts with embedded certificates take ~100 MiB.
pub const MAX_FILE: u64 = 256 * 1024 * 1024;

/// Why a kubeconfig file gives no kubeconfig: the file is to be fixed (never quoted: it holds
/// credentials).
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("cannot read: {0}")]
    Read(std::io::Error),
    #[error("{size} bytes, more than the {} MiB a kubeconfig may have", MAX_FILE >> 20)]
    TooLarge { size: u64 },
    #[error("not a valid kubeconfig: not text (UTF-8, or UTF-16 with its byte order mark)")]
    NotText,
    /// The parser's first line, every quoted part left out.
    #[error("not a valid kubeconfig: {0}")]
    Parse(String),
    #[error("not a valid kubeconfig: its documents do not merge: {0}")]
    Merge(String),
    /// Its aliases expand it far beyond its size (nested aliases: a "billion laughs").
    #[error(
        "not a valid kubeconfig: its aliases expand it far beyond its size (aliases of aliases?)"
    )]
    Expands,
}

/// Reads the kubeconfig at `path`.
pub fn read(path: &Path) -> Result<Kubeconfig, FileError> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(FileError::Read)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(FileError::Read)?;
    if bytes.len() as u64 > MAX_FILE {
        let size = std::fs::metadata(path).map_or(bytes.len() as u64, |m| m.len());
        return Err(FileError::TooLarge { size });
    }
    let text = text(bytes)?;
    let mut merged: Option<Kubeconfig> = None;
    for mut config in parse(&text)? {
        if let Some(dir) = path.parent() {
            absolute(&mut config, dir);
        }
        merged = Some(match merged {
            None => config,
            Some(first) => first
                .merge(config)
                .map_err(|e| FileError::Merge(crate::errors::redacted(&e.to_string())))?,
        });
    }
    Ok(merged.unwrap_or_default())
}

/// What a document may grow to once its aliases are expanded, in events replayed: as many as
/// the largest file read holds, and never fewer than sixteen times this file's own.
fn replay_limit(size: usize) -> usize {
    let bytes = (size as u64).saturating_mul(16).clamp(64 << 20, MAX_FILE);
    usize::try_from(bytes / BYTES_PER_EVENT).unwrap_or(usize::MAX)
}

/// About the bytes of YAML one event is written in (a key, a short value, its indentation).
const BYTES_PER_EVENT: u64 = 64;

/// Whether `e` is the parser refusing to expand aliases further (nested aliases: a "billion
/// laughs"), under the wrappers it puts around an error. The budget counts what aliases expand
/// to, and grows with the file: more nodes, events or scalar bytes than the file could hold
/// written out means aliases multiplied them.
fn expands_too_far(mut e: &serde_saphyr_2::Error) -> bool {
    use serde_saphyr_2::Error;
    use serde_saphyr_2::budget::BudgetBreach;
    loop {
        match e {
            Error::WithSnippet { error, .. } => e = error,
            #[allow(deprecated)] // `msg`, which is not read
            Error::AliasError { error, .. } => e = error,
            Error::Budget {
                breach:
                    BudgetBreach::Nodes { .. }
                    | BudgetBreach::Events { .. }
                    | BudgetBreach::ScalarBytes { .. }
                    | BudgetBreach::RecordedAnchorEvents { .. }
                    | BudgetBreach::RecordedAnchorBytes { .. },
                ..
            }
            | Error::AliasReplayLimitExceeded { .. }
            | Error::AliasExpansionLimitExceeded { .. }
            | Error::AliasReplayStackDepthExceeded { .. }
            | Error::AliasReplayCounterOverflow { .. } => return true,
            _ => return false,
        }
    }
}

/// Every document of `text`, with a budget in proportion to its size.
fn parse(text: &str) -> Result<Vec<Kubeconfig>, FileError> {
    let size = text.len();
    let mut budget = serde_saphyr_2::Budget::default();
    budget.max_nodes = budget.max_nodes.max(size);
    budget.max_events = budget.max_events.max(size.saturating_mul(4));
    budget.max_total_scalar_bytes = budget.max_total_scalar_bytes.max(size);
    // Aliases are bounded by what they expand to (above), not by how many there are.
    budget.enforce_alias_anchor_ratio = false;
    budget.max_aliases = budget.max_aliases.max(size);
    budget.max_anchors = budget.max_anchors.max(size);
    let mut options = serde_saphyr_2::Options::default();
    options.budget = Some(budget);
    // Replaying an alias is bounded by how far it expands the file, as the parser counts it
    // while it replays: a shared map used thousands of times is ordinary, aliases of aliases
    // that multiply are refused before they are built.
    let limit = replay_limit(size).max(options.alias_limits.max_total_replayed_events);
    options.alias_limits.max_total_replayed_events = limit;
    serde_saphyr_2::from_multiple_with_options(text, options).map_err(|e| {
        match expands_too_far(&e) {
            true => FileError::Expands,
            false => FileError::Parse(crate::errors::redacted(&e.to_string())),
        }
    })
}

/// UTF-8, or UTF-16 after its byte order mark, as kube reads it.
fn text(bytes: Vec<u8>) -> Result<String, FileError> {
    let utf16 = |rest: &[u8], word: fn([u8; 2]) -> u16| {
        let units: Vec<u16> = rest.chunks_exact(2).map(|c| word([c[0], c[1]])).collect();
        String::from_utf16(&units).map_err(|_| FileError::NotText)
    };
    match bytes.as_slice() {
        [0xFF, 0xFE, rest @ ..] => utf16(rest, u16::from_le_bytes),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, u16::from_be_bytes),
        _ => String::from_utf8(bytes).map_err(|_| FileError::NotText),
    }
}

/// Relative paths in `config` made absolute against `dir`, as kube and client-go do: the
/// certificate authority, client certificate and key, token file, and an exec command that
/// names a path (a bare `aws` is looked up on PATH).
fn absolute(config: &mut Kubeconfig, dir: &Path) {
    let within = |path: &mut Option<String>| {
        if let Some(p) = path.as_deref()
            && Path::new(p).is_relative()
            && let Some(joined) = dir.join(p).to_str()
        {
            *path = Some(joined.to_string());
        }
    };
    for named in &mut config.clusters {
        if let Some(cluster) = &mut named.cluster {
            within(&mut cluster.certificate_authority);
        }
    }
    for named in &mut config.auth_infos {
        if let Some(user) = &mut named.auth_info {
            within(&mut user.client_certificate);
            within(&mut user.client_key);
            within(&mut user.token_file);
            if let Some(exec) = &mut user.exec
                && exec
                    .command
                    .as_deref()
                    .is_some_and(|c| c.contains(std::path::MAIN_SEPARATOR))
            {
                within(&mut exec.command);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kubeconfig of `n` contexts, each with its cluster and user, as a fleet's file is.
    pub(crate) fn fleet(n: usize) -> String {
        let mut text = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
        for i in 0..n {
            text.push_str(&format!(
                "- name: c{i}\n  cluster:\n    server: https://10.0.{}.{}:6443\n    certificate-authority: ca/c{i}.pem\n",
                i / 250,
                i % 250
            ));
        }
        text.push_str("users:\n");
        for i in 0..n {
            text.push_str(&format!(
                "- name: u{i}\n  user:\n    token: t{i}\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: ./bin/login\n"
            ));
        }
        text.push_str("contexts:\n");
        for i in 0..n {
            text.push_str(&format!(
                "- name: ctx-{i}\n  context:\n    cluster: c{i}\n    user: u{i}\n"
            ));
        }
        text
    }

    #[test]
    fn a_kubeconfig_of_twenty_thousand_contexts_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fleet.kubeconfig");
        std::fs::write(&path, fleet(20_000)).unwrap();
        // kube's own reader refuses it (its budget is 250,000 nodes).
        assert!(Kubeconfig::read_from(&path).is_err());
        let config = read(&path).unwrap();
        assert_eq!(config.contexts.len(), 20_000);
        assert_eq!(config.clusters.len(), 20_000);
        // Relative paths as kube makes them: against the file's folder.
        let ca = config.clusters[7].cluster.as_ref().unwrap();
        assert_eq!(
            ca.certificate_authority.as_deref(),
            dir.path().join("ca/c7.pem").to_str()
        );
        let user = config.auth_infos[7].auth_info.as_ref().unwrap();
        let exec = user.exec.as_ref().unwrap();
        assert_eq!(
            exec.command.as_deref(),
            dir.path().join("./bin/login").to_str()
        );
    }

    #[test]
    fn documents_merge_and_a_small_file_reads_as_kube_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("two.yaml");
        let text = format!("{}---\n{}", fleet(2), fleet(3).replace("ctx-", "other-"));
        std::fs::write(&path, &text).unwrap();
        let ours = read(&path).unwrap();
        let kube = Kubeconfig::read_from(&path).unwrap();
        assert_eq!(
            serde_json::to_value(&ours).unwrap(),
            serde_json::to_value(&kube).unwrap()
        );
        assert_eq!(ours.contexts.len(), 5);
    }

    /// `n` contexts whose users are one map written once, as PyYAML's `safe_dump` writes a map
    /// many entries share: the first an anchor, every other an alias. `aliased` false: the same
    /// kubeconfig with every alias written out.
    pub(crate) fn shared_user(n: usize, aliased: bool) -> String {
        let mut text = String::from("apiVersion: v1\nkind: Config\nclusters:\n");
        for i in 0..n {
            text.push_str(&format!(
                "- name: c{i}\n  cluster:\n    server: https://10.0.{}.{}:6443\n",
                i / 250,
                i % 250
            ));
        }
        text.push_str("users:\n");
        let user = "\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: aws\n      args:\n      - eks\n      - get-token\n";
        for i in 0..n {
            let map = match (aliased, i) {
                (true, 0) => format!(" &id001{user}"),
                (true, _) => " *id001\n".to_string(),
                (false, _) => user.to_string(),
            };
            text.push_str(&format!("- name: u{i}\n  user:{map}"));
        }
        text.push_str("contexts:\n");
        for i in 0..n {
            text.push_str(&format!(
                "- name: ctx-{i}\n  context:\n    cluster: c{i}\n    user: u{i}\n"
            ));
        }
        text
    }

    #[test]
    fn aliases_of_one_shared_map_read_as_if_written_out() {
        let dir = tempfile::tempdir().unwrap();
        let (aliased, written) = (dir.path().join("a.yaml"), dir.path().join("w.yaml"));
        std::fs::write(&aliased, shared_user(20_000, true)).unwrap();
        std::fs::write(&written, shared_user(20_000, false)).unwrap();
        let ours = read(&aliased).unwrap();
        assert_eq!(ours.contexts.len(), 20_000);
        assert_eq!(ours.auth_infos.len(), 20_000);
        let exec = ours.auth_infos[19_999]
            .auth_info
            .as_ref()
            .unwrap()
            .exec
            .as_ref();
        assert_eq!(exec.unwrap().command.as_deref(), Some("aws"));
        assert_eq!(
            serde_json::to_value(&ours).unwrap(),
            serde_json::to_value(read(&written).unwrap()).unwrap()
        );
        // As kube reads a small one.
        std::fs::write(&aliased, shared_user(3, true)).unwrap();
        assert_eq!(
            serde_json::to_value(read(&aliased).unwrap()).unwrap(),
            serde_json::to_value(Kubeconfig::read_from(&aliased).unwrap()).unwrap()
        );
    }

    /// Nine levels of nine aliases each: 9^9 (387 million) copies of a short string from a file
    /// of under a kilobyte.
    fn laughs() -> String {
        let mut text = String::from("apiVersion: v1\nkind: Config\nlaughs:\n  l0: &l0 \"lol\"\n");
        for level in 1..=9 {
            let previous = format!("*l{}", level - 1);
            let nine = [previous.as_str(); 9].join(", ");
            text.push_str(&format!("  l{level}: &l{level} [{nine}]\n"));
        }
        text.push_str("users:\n- name: u\n  user:\n    token: *l9\n");
        text
    }

    #[test]
    fn a_billion_laughs_is_refused_before_it_is_expanded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("laughs.yaml");
        let text = laughs();
        assert!(text.len() < 1024, "{}", text.len());
        std::fs::write(&path, &text).unwrap();
        let e = read(&path).unwrap_err();
        assert!(matches!(e, FileError::Expands), "{e:?}");
        assert!(e.to_string().contains("aliases expand it"), "{e}");
        // Three levels are ordinary: read.
        let small = text
            .lines()
            .filter(|l| !l.starts_with("  l4") && !l.starts_with("  l5") && !l.starts_with("  l6"))
            .filter(|l| !l.starts_with("  l7") && !l.starts_with("  l8") && !l.starts_with("  l9"))
            .map(|l| l.replace("*l9", "x"))
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&path, &small).unwrap();
        assert!(read(&path).is_ok(), "{:?}", read(&path).err());
    }

    #[test]
    fn what_is_not_a_kubeconfig_is_refused_without_quoting_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.yaml");
        std::fs::write(&path, "users:\n- name: u\n  user: {token: \"s3cret\"\n").unwrap();
        let e = read(&path).unwrap_err();
        assert!(matches!(e, FileError::Parse(_)), "{e:?}");
        assert!(!e.to_string().contains("s3cret"), "{e}");
        std::fs::write(&path, [0xff, 0xfe, 0x00, 0xd8]).unwrap();
        assert!(matches!(read(&path).unwrap_err(), FileError::NotText));
        let e = read(&dir.path().join("missing")).unwrap_err();
        assert!(matches!(e, FileError::Read(_)), "{e:?}");
    }
}
