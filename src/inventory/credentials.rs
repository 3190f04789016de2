//! A cluster's kubeconfig as it is kept between connections.

use std::sync::Arc;

use kube::config::Kubeconfig;
use secrecy::{ExposeSecret, SecretSlice};

/// A cluster's self-contained kubeconfig (its one context, its cluster and its user), kept as
/// the JSON it is read back from whenever a connection is made, an action journaled or a
/// plugin handed it. kube's structs held it in ~2.2 KiB a cluster, most of them options left
/// empty; its JSON is little more than the texts it holds (the CA, the user's certificate and
/// key or token): ~1 KiB (docs/performance.md, "The third pass"). It holds a key or a token, so
/// its bytes are wiped when the last copy is let go and it is never printed.
///
/// None: not read (a fleet listed by name has its clusters' credentials read when they are
/// needed, [`crate::inventory::Reread`]).
#[derive(Clone, Default)]
pub struct Credentials(Option<Arc<SecretSlice<u8>>>);

impl Credentials {
    /// `kubeconfig` kept; none when it names no context.
    pub fn of(kubeconfig: &Kubeconfig) -> Credentials {
        if kubeconfig.contexts.is_empty() {
            return Credentials::default();
        }
        // kube's structs have only text keys: written as JSON, they always are.
        match serde_json::to_vec(kubeconfig) {
            Ok(json) => Credentials(Some(Arc::new(SecretSlice::from(json)))),
            Err(_) => Credentials::default(),
        }
    }

    /// Whether they have been read.
    pub fn is_read(&self) -> bool {
        self.0.is_some()
    }

    /// The user's name in the kubeconfig (`users[].name`): what the journal records, never the
    /// credentials themselves. Read without the rest.
    pub fn user(&self) -> String {
        #[derive(serde::Deserialize)]
        struct Users {
            #[serde(default)]
            users: Vec<Named>,
        }
        #[derive(serde::Deserialize)]
        struct Named {
            name: String,
        }
        self.0
            .as_ref()
            .and_then(|json| serde_json::from_slice::<Users>(json.expose_secret()).ok())
            .and_then(|u| u.users.into_iter().next())
            .map(|n| n.name)
            .unwrap_or_default()
    }

    /// The kubeconfig, read back (an empty one when none was kept).
    pub fn kubeconfig(&self) -> Kubeconfig {
        self.0
            .as_ref()
            .and_then(|json| serde_json::from_slice(json.expose_secret()).ok())
            .unwrap_or_default()
    }
}

impl From<Kubeconfig> for Credentials {
    fn from(kubeconfig: Kubeconfig) -> Credentials {
        Credentials::of(&kubeconfig)
    }
}

/// The same kubeconfig, word for word (a changed one reconnects its cluster).
impl PartialEq for Credentials {
    fn eq(&self, other: &Credentials) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => a.expose_secret() == b.expose_secret(),
            _ => false,
        }
    }
}

/// Hashed as its words: whether a cluster is reached the same way as before.
impl std::hash::Hash for Credentials {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.as_ref().map(|json| json.expose_secret()).hash(state);
    }
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(_) => f.write_str("Credentials(read, not shown)"),
            None => f.write_str("Credentials(not read)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KUBECONFIG: &str = r#"
apiVersion: v1
kind: Config
current-context: dev
contexts:
- name: dev
  context: {cluster: cluster, user: alice, namespace: apps}
clusters:
- name: cluster
  cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: Q0E=}
users:
- name: alice
  user: {token: s3cret-token, client-key-data: S0VZ}
"#;

    /// Kept and read back, a kubeconfig is the same; its secrets are never printed.
    #[test]
    fn a_kubeconfig_reads_back_whole_and_shows_no_secret() {
        let kubeconfig = Kubeconfig::from_yaml(KUBECONFIG).unwrap();
        let kept = Credentials::of(&kubeconfig);
        assert!(kept.is_read());
        let back = kept.kubeconfig();
        assert_eq!(
            serde_json::to_string(&back).unwrap(),
            serde_json::to_string(&kubeconfig).unwrap()
        );
        let user = back.auth_infos[0].auth_info.as_ref().unwrap();
        assert_eq!(user.token.as_ref().unwrap().expose_secret(), "s3cret-token");
        assert_eq!(kept, Credentials::of(&kubeconfig));
        assert_eq!(kept.user(), "alice");
        let said = format!("{kept:?}");
        assert!(!said.contains("s3cret") && !said.contains("S0VZ"), "{said}");

        let none = Credentials::of(&Kubeconfig::default());
        assert!(!none.is_read());
        assert_ne!(none, kept);
        assert!(none.kubeconfig().contexts.is_empty());
        assert_eq!(none.user(), "");
    }
}
