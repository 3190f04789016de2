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
    /// Each cluster its own TLS name, as clusters have their own hosts: a client keeps TLS
    /// sessions per server name, and one address for the whole fleet would let every cluster
    /// resume another's session (cheaper than any real fleet).
    #[serde(rename = "tls-server-name", skip_serializing_if = "Option::is_none")]
    tls_server_name: Option<String>,
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
                    tls_server_name: tls_name(e.name),
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

/// `<cluster>.clusters.fluxfleet.sim`, which the simulator's certificate covers; None for a
/// name that is not a DNS label.
pub fn tls_name(cluster: &str) -> Option<String> {
    let label = !cluster.is_empty()
        && cluster.len() <= 63
        && !cluster.starts_with('-')
        && !cluster.ends_with('-')
        && cluster
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    label.then(|| format!("{cluster}.{}", super::tls::CLUSTER_DOMAIN))
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

    #[test]
    fn each_cluster_gets_its_own_tls_name_when_its_name_is_a_dns_label() {
        assert_eq!(
            tls_name("platform-prod-001").as_deref(),
            Some("platform-prod-001.clusters.fluxfleet.sim")
        );
        assert_eq!(tls_name("Prod_1"), None);
        assert_eq!(tls_name("-x"), None);
        assert_eq!(tls_name(&"a".repeat(64)), None);
        let text = render(
            &[Entry {
                name: "a",
                server: "https://127.0.0.1:1/clusters/a",
                token: "t",
                role: "admin",
            }],
            "pem",
        );
        assert!(
            text.contains("tls-server-name: a.clusters.fluxfleet.sim"),
            "{text}"
        );
    }
}
