//! A cluster's kubeconfig as it is kept between connections.

use std::collections::HashSet;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

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
pub struct Credentials(Option<Arc<Kept>>);

/// A kubeconfig kept: its JSON without its cluster's CA, and the CA apart, in one text for every
/// cluster that trusts the same ([`authority`]): clusters behind one proxy (Rancher, Teleport,
/// a simulator) share their CA, and its base64 PEM was ~750 bytes of each cluster's ~1.2 KiB.
struct Kept {
    json: SecretSlice<u8>,
    /// `clusters[0].cluster.certificate-authority-data`: a public certificate, not a secret.
    authority: Option<Arc<str>>,
}

/// The CA texts of the clusters kept, each once. Swept of those no cluster holds any more
/// when it has doubled since the last sweep, so a fleet read again and again does not grow it.
struct Authorities {
    texts: HashSet<Arc<str>>,
    swept_at: usize,
}

static AUTHORITIES: LazyLock<Mutex<Authorities>> = LazyLock::new(|| {
    Mutex::new(Authorities {
        texts: HashSet::new(),
        swept_at: 0,
    })
});

/// `text` as the one copy every cluster that trusts the same CA holds.
fn authority(text: String) -> Arc<str> {
    let mut kept = AUTHORITIES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(same) = kept.texts.get(text.as_str()) {
        return same.clone();
    }
    if kept.texts.len() >= 2 * kept.swept_at.max(512) {
        kept.texts.retain(|t| Arc::strong_count(t) > 1);
        kept.swept_at = kept.texts.len();
    }
    let text: Arc<str> = text.into();
    kept.texts.insert(text.clone());
    text
}

impl Credentials {
    /// `kubeconfig` kept; none when it names no context.
    pub fn of(kubeconfig: &Kubeconfig) -> Credentials {
        if kubeconfig.contexts.is_empty() {
            return Credentials::default();
        }
        let mut kubeconfig = kubeconfig.clone();
        let authority = kubeconfig
            .clusters
            .first_mut()
            .and_then(|c| c.cluster.as_mut())
            .and_then(|c| c.certificate_authority_data.take())
            .map(authority);
        // kube's structs have only text keys: written as JSON, they always are.
        match serde_json::to_vec(&kubeconfig) {
            Ok(json) => Credentials(Some(Arc::new(Kept {
                json: SecretSlice::from(json),
                authority,
            }))),
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
            .and_then(|kept| serde_json::from_slice::<Users>(kept.json.expose_secret()).ok())
            .and_then(|u| u.users.into_iter().next())
            .map(|n| n.name)
            .unwrap_or_default()
    }

    /// The kubeconfig, read back (an empty one when none was kept).
    pub fn kubeconfig(&self) -> Kubeconfig {
        let Some(kept) = &self.0 else {
            return Kubeconfig::default();
        };
        let Ok(mut kubeconfig) = serde_json::from_slice::<Kubeconfig>(kept.json.expose_secret())
        else {
            return Kubeconfig::default();
        };
        if let Some(cluster) = kubeconfig
            .clusters
            .first_mut()
            .and_then(|c| c.cluster.as_mut())
        {
            cluster.certificate_authority_data = kept.authority.as_deref().map(str::to_string);
        }
        kubeconfig
    }

    /// The CA text, shared with every cluster that trusts the same (for the tests).
    #[cfg(test)]
    fn authority(&self) -> Option<&Arc<str>> {
        self.0.as_ref().and_then(|kept| kept.authority.as_ref())
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
            (Some(a), Some(b)) => {
                a.json.expose_secret() == b.json.expose_secret() && a.authority == b.authority
            }
            _ => false,
        }
    }
}

/// Hashed as its words: whether a cluster is reached the same way as before.
impl std::hash::Hash for Credentials {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0
            .as_ref()
            .map(|kept| (kept.json.expose_secret(), &kept.authority))
            .hash(state);
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

    /// Clusters that trust one CA keep one copy of it; another CA is its own, and a changed CA
    /// is a changed kubeconfig.
    #[test]
    fn clusters_that_trust_one_ca_keep_it_once() {
        let with_ca = |ca: &str, server: &str| {
            Kubeconfig::from_yaml(
                &KUBECONFIG
                    .replace("Q0E=", ca)
                    .replace("https://10.0.0.1:6443", server),
            )
            .unwrap()
        };
        let one = Credentials::of(&with_ca("U0hBUkVE", "https://a:6443"));
        let two = Credentials::of(&with_ca("U0hBUkVE", "https://b:6443"));
        assert!(Arc::ptr_eq(
            one.authority().unwrap(),
            two.authority().unwrap()
        ));
        assert_ne!(one, two);
        let other = Credentials::of(&with_ca("T1RIRVI=", "https://a:6443"));
        assert!(!Arc::ptr_eq(
            one.authority().unwrap(),
            other.authority().unwrap()
        ));
        assert_ne!(one, other);
        let cluster = |c: &Credentials| {
            c.kubeconfig().clusters[0]
                .cluster
                .clone()
                .unwrap()
                .certificate_authority_data
        };
        assert_eq!(cluster(&two).as_deref(), Some("U0hBUkVE"));
        assert_eq!(cluster(&other).as_deref(), Some("T1RIRVI="));
    }
}
