//! The proxy a cluster is reached through: the kubeconfig's `proxy-url`, or the environment's
//! (`HTTPS_PROXY`, `ALL_PROXY`) unless `NO_PROXY` exempts the server.

use http::Uri;
use hyper_util::client::proxy::matcher::Matcher;

use crate::userinfo::percent_decoded;

/// How to go through a proxy.
#[derive(Clone, Debug, PartialEq)]
pub struct Proxy {
    /// Where the proxy listens, without credentials.
    pub uri: Uri,
    pub protocol: ProxyProtocol,
    /// From the proxy URL's userinfo (`http://user:pass@proxy:3128`), percent-decoded.
    pub credentials: Option<(String, String)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProxyProtocol {
    /// `http://`: HTTP CONNECT.
    Connect,
    /// `socks5://` (names resolved here) and `socks5h://` (names resolved by the proxy).
    Socks5 { remote_dns: bool },
}

/// A proxy fluxfleet will not use: the kubeconfig's `proxy-url` (or the environment's proxy)
/// is to be fixed. Never its credentials.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProxyError {
    #[error("proxy-url is not a URL: {0}")]
    NotUrl(String),
    #[error(
        "an https:// proxy is not supported: fluxfleet does not speak TLS to proxies, and would \
         send the proxy's credentials and the CONNECT request in clear text; use an http://, \
         socks5:// or socks5h:// proxy"
    )]
    Https,
    #[error("proxy scheme {0:?} is not supported (http, socks5, socks5h)")]
    Scheme(String),
    #[error("the proxy URL has no host")]
    NoHost,
}

/// The proxy to reach `server` through: the kubeconfig's `proxy-url` when it has one, else the
/// environment's unless `NO_PROXY` exempts the server. (kube alone would send every cluster
/// through `HTTPS_PROXY`, ignoring `NO_PROXY`.) A proxy fluxfleet cannot speak to safely is an
/// error, never a silent fallback: an `https://` proxy would get its credentials in clear text.
pub fn proxy_for(
    explicit: Option<&str>,
    server: &Uri,
    env: &Matcher,
) -> Result<Option<Proxy>, ProxyError> {
    // The environment's proxies come with their credentials already taken out of the URL.
    let (uri, env_credentials) = match explicit.filter(|p| !p.is_empty()) {
        Some(p) => (
            p.parse::<Uri>()
                .map_err(|e| ProxyError::NotUrl(e.to_string()))?,
            None,
        ),
        None => match env.intercept(server) {
            Some(i) => {
                let credentials = match (i.raw_auth(), i.basic_auth()) {
                    (Some((u, p)), _) => Some((u.to_string(), p.to_string())),
                    (None, Some(basic)) => from_basic(basic),
                    (None, None) => None,
                };
                (i.uri().clone(), credentials)
            }
            None => return Ok(None),
        },
    };
    let protocol = match uri.scheme_str().map(str::to_ascii_lowercase).as_deref() {
        Some("http") => ProxyProtocol::Connect,
        Some("socks5") => ProxyProtocol::Socks5 { remote_dns: false },
        Some("socks5h") => ProxyProtocol::Socks5 { remote_dns: true },
        Some("https") => return Err(ProxyError::Https),
        other => return Err(ProxyError::Scheme(other.unwrap_or_default().to_string())),
    };
    let authority = uri.authority().ok_or(ProxyError::NoHost)?;
    let (credentials, host) = match authority.as_str().rsplit_once('@') {
        Some((userinfo, host)) => {
            let (user, pass) = userinfo.split_once(':').unwrap_or((userinfo, ""));
            (Some((percent_decoded(user), percent_decoded(pass))), host)
        }
        None => (None, authority.as_str()),
    };
    let scheme = uri.scheme_str().unwrap_or("http");
    let bare = format!("{scheme}://{host}")
        .parse::<Uri>()
        .map_err(|e| ProxyError::NotUrl(e.to_string()))?;
    Ok(Some(Proxy {
        uri: bare,
        protocol,
        credentials: credentials.or(env_credentials),
    }))
}

/// User and password back out of `Basic …`.
fn from_basic(header: &http::HeaderValue) -> Option<(String, String)> {
    use base64::Engine as _;
    let encoded = header.to_str().ok()?.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, pass) = text.split_once(':')?;
    Some((user.to_string(), pass.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kubeconfig_proxy_wins_and_no_proxy_exempts_servers_from_the_environment() {
        let env = Matcher::builder()
            .https("http://corp-proxy:3128")
            .no("10.0.0.0/8, .internal")
            .build();
        let uri = |s: &str| s.parse::<Uri>().unwrap();
        let proxy = |explicit, server| {
            proxy_for(explicit, &uri(server), &env)
                .unwrap()
                .map(|p| p.uri.to_string())
        };
        assert_eq!(
            proxy(None, "https://api.example.com:6443").as_deref(),
            Some("http://corp-proxy:3128/")
        );
        assert_eq!(proxy(None, "https://10.1.2.3:6443"), None);
        assert_eq!(proxy(None, "https://k8s.prod.internal"), None);
        assert_eq!(
            proxy(Some("socks5://bastion:1080"), "https://10.1.2.3:6443").as_deref(),
            Some("socks5://bastion:1080/")
        );
        assert!(proxy_for(Some("::bad"), &uri("https://x"), &env).is_err());
    }

    #[test]
    fn proxy_schemes_and_credentials_are_read_as_written_and_https_is_refused() {
        let env = Matcher::builder().build();
        let server = "https://api:6443".parse::<Uri>().unwrap();
        let p = proxy_for(Some("socks5h://bob:p%40ss@bastion:1080"), &server, &env)
            .unwrap()
            .unwrap();
        assert_eq!(p.protocol, ProxyProtocol::Socks5 { remote_dns: true });
        assert_eq!(p.credentials, Some(("bob".into(), "p@ss".into())));
        assert_eq!(p.uri.to_string(), "socks5h://bastion:1080/");
        let p = proxy_for(Some("http://alice:s3cret@corp:3128"), &server, &env)
            .unwrap()
            .unwrap();
        assert_eq!(p.protocol, ProxyProtocol::Connect);
        assert_eq!(p.uri.to_string(), "http://corp:3128/");
        let e = proxy_for(Some("https://alice:s3cret@corp:3128"), &server, &env).unwrap_err();
        assert_eq!(e, ProxyError::Https);
        assert!(!e.to_string().contains("s3cret"));
        let e = proxy_for(Some("socks4://corp:1080"), &server, &env).unwrap_err();
        assert_eq!(e, ProxyError::Scheme("socks4".into()));
    }
}
