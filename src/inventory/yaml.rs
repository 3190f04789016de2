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

/// Every document of `text`, with a budget in proportion to its size.
fn parse(text: &str) -> Result<Vec<Kubeconfig>, FileError> {
    let size = text.len();
    let mut budget = serde_saphyr_2::Budget::default();
    budget.max_nodes = budget.max_nodes.max(size);
    budget.max_events = budget.max_events.max(size.saturating_mul(4));
    budget.max_total_scalar_bytes = budget.max_total_scalar_bytes.max(size);
    let mut options = serde_saphyr_2::Options::default();
    options.budget = Some(budget);
    serde_saphyr_2::from_multiple_with_options(text, options)
        .map_err(|e| FileError::Parse(crate::errors::redacted(&e.to_string())))
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
