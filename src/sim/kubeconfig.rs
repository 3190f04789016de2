//! Kubeconfig files for the simulated fleet, written the way `kubectl config view --raw` shows
//! them: one context per cluster, the CA inline, bearer tokens.

use base64::Engine;
use serde::Serialize;

#[derive(Serialize)]
struct NamedCluster<'a> {
    name: &'a str,
    cluster: ClusterEntry<'a>,
}

#[derive(Serialize)]
struct ClusterEntry<'a> {
    server: &'a str,
    #[serde(rename = "certificate-authority-data")]
    ca: &'a str,
}

#[derive(Serialize)]
struct NamedUser<'a> {
    name: String,
    user: UserEntry<'a>,
}

#[derive(Serialize)]
struct UserEntry<'a> {
    token: &'a str,
}

#[derive(Serialize)]
struct NamedContext<'a> {
    name: &'a str,
    context: ContextEntry<'a>,
}

#[derive(Serialize)]
struct ContextEntry<'a> {
    cluster: &'a str,
    user: String,
    namespace: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct Config<'a> {
    api_version: &'static str,
    kind: &'static str,
    clusters: Vec<NamedCluster<'a>>,
    users: Vec<NamedUser<'a>>,
    contexts: Vec<NamedContext<'a>>,
    current_context: &'a str,
}

/// One cluster as it appears in a kubeconfig.
pub struct Entry<'a> {
    /// Context and cluster name.
    pub name: &'a str,
    pub server: &'a str,
    pub token: &'a str,
    /// `admin` or `viewer`: the user entry is named `<name>-<role>`.
    pub role: &'a str,
}

/// Renders a kubeconfig holding `entries`; the first is the current context.
pub fn render(entries: &[Entry], ca_pem: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let config = Config {
        api_version: "v1",
        kind: "Config",
        clusters: entries
            .iter()
            .map(|e| NamedCluster {
                name: e.name,
                cluster: ClusterEntry {
                    server: e.server,
                    ca: &ca,
                },
            })
            .collect(),
        users: entries
            .iter()
            .map(|e| NamedUser {
                name: format!("{}-{}", e.name, e.role),
                user: UserEntry { token: e.token },
            })
            .collect(),
        contexts: entries
            .iter()
            .map(|e| NamedContext {
                name: e.name,
                context: ContextEntry {
                    cluster: e.name,
                    user: format!("{}-{}", e.name, e.role),
                    namespace: "flux-system",
                },
            })
            .collect(),
        current_context: entries.first().map_or("", |e| e.name),
    };
    // Serializing plain strings and lists cannot fail; an empty file would be reported by
    // every client that reads it.
    serde_saphyr::to_string(&config).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_reads_what_we_write() {
        let text = render(
            &[Entry {
                name: "a",
                server: "https://127.0.0.1:1/clusters/a",
                token: "t0k",
                role: "admin",
            }],
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
        );
        let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
        assert_eq!(kc.current_context.as_deref(), Some("a"));
        let cluster = kc.clusters[0].cluster.as_ref().unwrap();
        assert_eq!(
            cluster.server.as_deref(),
            Some("https://127.0.0.1:1/clusters/a")
        );
        assert!(cluster.certificate_authority_data.is_some());
        assert_eq!(kc.auth_infos[0].name, "a-admin");
    }
}
