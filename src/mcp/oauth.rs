//! `mcp --listen` as an OAuth 2.1 resource server, as the MCP specification's authorization asks:
//! an access token (a JWT) from the configured issuer, checked against the keys it publishes
//! (OpenID discovery, then its JWK set; a key it rotates in is fetched when a token names it),
//! for this server (`aud`: its URL, RFC 8707), unexpired, with the scopes that map to what a
//! person may do here — `fluxfleet:read`, `fluxfleet:propose`, `fluxfleet:write`. A client
//! without a token is told where to get one: 401 with `WWW-Authenticate: Bearer
//! resource_metadata=…` pointing at `/.well-known/oauth-protected-resource` (RFC 9728).
//!
//! Everything from the issuer is untrusted input: its documents are bounded in size and time,
//! its keys must be asymmetric (a symmetric key in a JWK set would let anyone who reads the set
//! sign tokens), and a token's `alg` must be one of the asymmetric algorithms its key is for —
//! never `none`, never HMAC.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hyper::Uri;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::{Value, json};

/// The scopes, as the issuer grants them.
pub const READ: &str = "fluxfleet:read";
pub const PROPOSE: &str = "fluxfleet:propose";
pub const WRITE: &str = "fluxfleet:write";

pub use issuer::IssuerError;
use issuer::{IssuerClient, Keys, client, fetch, keys, secure_or_loopback};

mod issuer;

/// Where the protected resource's metadata is served (RFC 9728).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// A token naming a key not in the set fetches the set again at most this often (a stream of
/// tokens with made-up key ids must not become a stream of fetches).
const REFETCH_EVERY: Duration = Duration::from_secs(10);
/// A token larger than this is not one.
const TOKEN_MAX: usize = 16 * 1024;
/// Clock difference allowed between the issuer and this server.
const LEEWAY: Duration = Duration::from_secs(5);
/// Groups kept from a token, at most.
const GROUPS_MAX: usize = 64;

/// How the resource server is set up (`mcp --listen --oauth-issuer … --oauth-audience …`).
#[derive(Clone, Debug)]
pub struct OAuthSettings {
    /// The issuer's URL, exactly as its tokens' `iss` say it.
    pub issuer: String,
    /// This server's URL (the resource its tokens are minted for, their `aud`).
    pub audience: String,
    /// A CA (PEM) for an issuer whose certificate the system's roots do not cover.
    pub ca: Option<PathBuf>,
    /// The claim holding a person's name (for the journal, Events and impersonation).
    pub username_claim: String,
    /// The claim holding a person's groups.
    pub groups_claim: String,
    /// `--impersonate`: what a call sends to clusters, it sends as the person asking
    /// (`Impersonate-User`, `Impersonate-Group`), their name and groups behind this prefix.
    pub impersonate: Option<String>,
}

/// Why a token is refused: each an answer of its own at the edge (401 `invalid_token`, or 403
/// `insufficient_scope`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rejected {
    #[error("no bearer token")]
    Missing,
    #[error("the token cannot be read: {0}")]
    Malformed(String),
    #[error("the token is signed with {0}, which this server does not take")]
    Algorithm(String),
    #[error("the token names a key the issuer does not publish")]
    UnknownKey,
    #[error("the token's signature does not verify")]
    Signature,
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid yet")]
    NotYet,
    #[error("the token is for another resource (aud), not this server")]
    Audience,
    #[error("the token is from another issuer")]
    Issuer,
    #[error("the token lacks {0}")]
    Scope(&'static str),
}

impl Rejected {
    /// The `error` of `WWW-Authenticate` (RFC 6750 §3.1).
    pub fn code(&self) -> Option<&'static str> {
        match self {
            Rejected::Missing => None,
            Rejected::Scope(_) => Some("insufficient_scope"),
            _ => Some("invalid_token"),
        }
    }
}

/// What a token grants here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Grants {
    pub read: bool,
    pub propose: bool,
    pub write: bool,
}

impl Grants {
    fn of(scopes: &[&str]) -> Grants {
        Grants {
            read: scopes.contains(&READ),
            propose: scopes.contains(&PROPOSE),
            write: scopes.contains(&WRITE),
        }
    }

    /// Whether `scope` (one of [`READ`], [`PROPOSE`], [`WRITE`]) is granted.
    pub fn has(&self, scope: &str) -> bool {
        match scope {
            READ => self.read,
            PROPOSE => self.propose,
            WRITE => self.write,
            _ => false,
        }
    }
}

/// Who asks, as their token says: what the journal, the Events, the limits and impersonation
/// key on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    /// `sub`: whom the limits count.
    pub subject: String,
    /// The username claim (`sub` where the token has none).
    pub username: String,
    pub groups: Vec<String>,
    pub grants: Grants,
    /// The OAuth client the token was issued to (`client_id` or `azp`), where it says.
    pub client: Option<String>,
}

/// The claims read from a verified token.
#[derive(Deserialize)]
struct Claims {
    sub: String,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    scp: Option<Vec<String>>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    azp: Option<String>,
    #[serde(flatten)]
    rest: HashMap<String, Value>,
}

/// Checks access tokens for one issuer and one audience.
pub struct Verifier {
    settings: OAuthSettings,
    jwks_uri: Uri,
    client: IssuerClient,
    keys: tokio::sync::RwLock<Keys>,
    /// When the set was last fetched because a token named a key it lacked.
    refetched: Mutex<Option<Instant>>,
}

impl Verifier {
    /// Reads the issuer's discovery document and its keys: an issuer that cannot be read stops
    /// the server before anything is served.
    pub async fn discover(settings: OAuthSettings) -> Result<Verifier, IssuerError> {
        let issuer: Uri = settings
            .issuer
            .parse()
            .map_err(|_| IssuerError::Url(settings.issuer.clone()))?;
        if !secure_or_loopback(&issuer) {
            return Err(IssuerError::Url(settings.issuer.clone()));
        }
        let audience: Uri = settings
            .audience
            .parse()
            .map_err(|_| IssuerError::Audience(settings.audience.clone()))?;
        if audience.scheme().is_none() || audience.authority().is_none() {
            return Err(IssuerError::Audience(settings.audience.clone()));
        }
        let client = client(settings.ca.as_deref())?;
        let discovery = format!(
            "{}/.well-known/openid-configuration",
            settings.issuer.trim_end_matches('/')
        );
        let document = fetch(&client, &discovery, "discovery document").await?;
        let said = document
            .get("issuer")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if said != settings.issuer {
            return Err(IssuerError::OtherIssuer {
                asked: settings.issuer.clone(),
                said: crate::units::truncate(said, 256),
            });
        }
        let jwks_uri = document
            .get("jwks_uri")
            .and_then(Value::as_str)
            .and_then(|u| u.parse::<Uri>().ok())
            .filter(secure_or_loopback)
            .ok_or_else(|| IssuerError::Document {
                what: "discovery document",
                url: discovery.clone(),
                why: "no jwks_uri (https://, or http:// on loopback)".into(),
            })?;
        let keys = keys(&client, &jwks_uri).await?;
        Ok(Verifier {
            settings,
            jwks_uri,
            client,
            keys: tokio::sync::RwLock::new(keys),
            refetched: Mutex::new(None),
        })
    }

    pub fn settings(&self) -> &OAuthSettings {
        &self.settings
    }

    /// The protected resource's metadata (RFC 9728): where its tokens come from and what they
    /// may carry.
    pub fn metadata(&self) -> Value {
        json!({
            "resource": self.settings.audience,
            "authorization_servers": [self.settings.issuer],
            "scopes_supported": [READ, PROPOSE, WRITE],
            "bearer_methods_supported": ["header"],
            "resource_name": "fluxfleet",
            "resource_documentation": "https://github.com/fluxfleet/fluxfleet/blob/main/docs/security.md",
        })
    }

    /// The principal `token` stands for, if it is one of the issuer's, for this server, now.
    pub async fn verify(&self, token: &str) -> Result<Principal, Rejected> {
        if token.is_empty() {
            return Err(Rejected::Missing);
        }
        if token.len() > TOKEN_MAX {
            return Err(Rejected::Malformed("longer than a token".into()));
        }
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| Rejected::Malformed(e.to_string()))?;
        if !asymmetric(header.alg) {
            return Err(Rejected::Algorithm(format!("{:?}", header.alg)));
        }
        let kid = header.kid.clone();
        let key = match self.key(kid.as_deref(), header.alg).await {
            Some(key) => key,
            None => {
                self.refetch().await;
                self.key(kid.as_deref(), header.alg)
                    .await
                    .ok_or(Rejected::UnknownKey)?
            }
        };
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.settings.issuer]);
        validation.set_audience(&[&self.settings.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = LEEWAY.as_secs();
        validation.validate_nbf = true;
        let data = jsonwebtoken::decode::<Claims>(token, &key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            match e.kind() {
                ErrorKind::InvalidSignature => Rejected::Signature,
                ErrorKind::ExpiredSignature => Rejected::Expired,
                ErrorKind::ImmatureSignature => Rejected::NotYet,
                ErrorKind::InvalidAudience => Rejected::Audience,
                ErrorKind::InvalidIssuer => Rejected::Issuer,
                ErrorKind::InvalidAlgorithm => Rejected::Algorithm(format!("{:?}", header.alg)),
                _ => Rejected::Malformed(e.to_string()),
            }
        })?;
        Ok(self.principal(data.claims))
    }

    fn principal(&self, claims: Claims) -> Principal {
        let scopes: Vec<&str> = match (&claims.scope, &claims.scp) {
            (Some(scope), _) => scope.split_whitespace().collect(),
            (None, Some(scp)) => scp.iter().map(String::as_str).collect(),
            (None, None) => Vec::new(),
        };
        let grants = Grants::of(&scopes);
        let username = claims
            .rest
            .get(&self.settings.username_claim)
            .and_then(Value::as_str)
            .unwrap_or(&claims.sub);
        let groups = claims
            .rest
            .get(&self.settings.groups_claim)
            .and_then(Value::as_array)
            .map(|groups| {
                groups
                    .iter()
                    .filter_map(Value::as_str)
                    .take(GROUPS_MAX)
                    .map(|g| crate::units::truncate(g, 256))
                    .collect()
            })
            .unwrap_or_default();
        Principal {
            username: crate::units::truncate(username, 256),
            subject: crate::units::truncate(&claims.sub, 256),
            groups,
            grants,
            client: claims
                .client_id
                .or(claims.azp)
                .map(|c| crate::units::truncate(&c, 128)),
        }
    }

    /// The key for `kid` and `alg`: the one with that id (the only one where the token names
    /// none), whose algorithm is `alg`.
    async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
        let keys = self.keys.read().await;
        let mut fitting = keys
            .by_id
            .iter()
            .filter(|(id, a, _)| *a == alg && (kid.is_none() || id.as_deref() == kid));
        let first = fitting.next()?;
        // No key id and several keys of the algorithm: which one is not known.
        if kid.is_none() && fitting.next().is_some() {
            return None;
        }
        Some(first.2.clone())
    }

    /// The set fetched again, at most every [`REFETCH_EVERY`]; a set that cannot be read
    /// leaves the last one in place.
    async fn refetch(&self) {
        {
            let mut last = self
                .refetched
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if last.is_some_and(|at| at.elapsed() < REFETCH_EVERY) {
                return;
            }
            *last = Some(Instant::now());
        }
        match keys(&self.client, &self.jwks_uri).await {
            Ok(fresh) => *self.keys.write().await = fresh,
            Err(e) => tracing::warn!(error = %e, "the issuer's keys could not be fetched again"),
        }
    }

    /// How long ago the keys were fetched (for `/metrics`).
    pub async fn keys_age(&self) -> Duration {
        self.keys.read().await.fetched.elapsed()
    }
}

/// The asymmetric algorithms a token may be signed with.
fn asymmetric(alg: Algorithm) -> bool {
    use Algorithm::*;
    matches!(
        alg,
        RS256 | RS384 | RS512 | PS256 | PS384 | PS512 | ES256 | ES384 | EdDSA
    )
}

#[cfg(test)]
mod tests;
