//! Kubeconfigs that come from another cluster (Cluster API and Kommander Secrets) are data, not
//! instructions. Whoever can write such a Secret must not be able to run a command on the user's
//! machine (`exec`, `auth-provider`), read a local file and send it away (`tokenFile`,
//! `client-key`, `certificate-authority` paths), route the connection (`proxy-url`), or turn
//! off what protects the credentials (`insecure-skip-tls-verify`, `http://`). Only inline
//! credentials and an `https://` server are used; anything else refuses that cluster alone.

use kube::config::Kubeconfig;

/// Why the kubeconfig in a Secret cannot be used as it is; None when it holds only data.
/// Names the offending fields, never their values.
pub fn refusal(kubeconfig: &Kubeconfig) -> Option<String> {
    let mut found: Vec<&str> = Vec::new();
    if let Some(cluster) = kubeconfig.clusters.first().and_then(|c| c.cluster.as_ref()) {
        let server = cluster.server.as_deref().unwrap_or_default();
        if !server.to_ascii_lowercase().starts_with("https://") {
            found.push("a server that is not https://");
        }
        if cluster.insecure_skip_tls_verify == Some(true) {
            found.push("insecure-skip-tls-verify");
        }
        if cluster.certificate_authority.is_some() {
            found.push("certificate-authority (a local file)");
        }
        if cluster.proxy_url.is_some() {
            found.push("proxy-url");
        }
    }
    if let Some(user) = kubeconfig
        .auth_infos
        .first()
        .and_then(|a| a.auth_info.as_ref())
    {
        if user.exec.is_some() {
            found.push("exec (a command to run)");
        }
        if user.auth_provider.is_some() {
            found.push("auth-provider");
        }
        if user.token_file.is_some() {
            found.push("tokenFile (a local file)");
        }
        if user.client_certificate.is_some() {
            found.push("client-certificate (a local file)");
        }
        if user.client_key.is_some() {
            found.push("client-key (a local file)");
        }
        if user.username.is_some() || user.password.is_some() {
            found.push("username/password");
        }
        if user.impersonate.is_some() || user.impersonate_groups.is_some() {
            found.push("impersonation");
        }
    }
    (!found.is_empty()).then(|| {
        format!(
            "the kubeconfig from the Secret uses {}: a kubeconfig from another cluster may hold \
             only a token or client certificate and key data, CA data and an https:// server",
            found.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn config(cluster: &str, user: &str) -> Kubeconfig {
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n{cluster}\n\
             users:\n- name: u\n  user:\n{user}\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\n"
        );
        Kubeconfig::from_yaml(&text).unwrap()
    }

    const SERVER: &str = "    server: https://10.0.0.1:6443\n    certificate-authority-data: Zm9v";

    #[test]
    fn inline_credentials_and_an_https_server_are_used() {
        assert_eq!(refusal(&config(SERVER, "    token: abc")), None);
        assert_eq!(
            refusal(&config(
                SERVER,
                "    client-certificate-data: Zm9v\n    client-key-data: YmFy"
            )),
            None
        );
    }

    #[test]
    fn instructions_and_local_paths_are_refused_by_name_never_by_value() {
        let cases = [
            (
                SERVER,
                "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [-c, 'id > /tmp/pwned']",
                "exec",
            ),
            (SERVER, "    tokenFile: /home/me/.ssh/id_rsa", "tokenFile"),
            (
                SERVER,
                "    client-certificate: /etc/c.pem\n    client-key: /etc/k.pem",
                "client-key",
            ),
            (
                SERVER,
                "    auth-provider:\n      name: gcp\n      config: {cmd-path: /bin/sh}",
                "auth-provider",
            ),
            (
                "    server: https://x\n    certificate-authority: /etc/ca.pem",
                "    token: abc",
                "certificate-authority",
            ),
            (
                "    server: https://x\n    proxy-url: http://evil:3128",
                "    token: abc",
                "proxy-url",
            ),
            (
                "    server: https://x\n    insecure-skip-tls-verify: true",
                "    token: abc",
                "insecure-skip-tls-verify",
            ),
            ("    server: http://x", "    token: abc", "not https://"),
        ];
        for (cluster, user, what) in cases {
            let why = refusal(&config(cluster, user)).unwrap_or_default();
            assert!(why.contains(what), "{what}: {why}");
            for secret in ["/tmp/pwned", "id_rsa", "evil", "/etc/"] {
                assert!(!why.contains(secret), "{why}");
            }
        }
    }
}
