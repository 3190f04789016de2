//! A certificate authority generated at start, and the server certificate it signs. Clients get
//! the CA as `certificate-authority-data`, exactly like a real cluster's kubeconfig.

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::ServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use super::Error;

/// The generated CA (PEM, for kubeconfigs) and the TLS configuration of the server.
pub struct Tls {
    pub ca_pem: String,
    pub server_config: Arc<ServerConfig>,
}

fn tls_err(e: impl std::fmt::Display) -> Error {
    Error::Tls(e.to_string())
}

/// Generates a fresh CA and a server certificate valid for `localhost`, `127.0.0.1`, `::1` and the
/// extra `hosts`, and a rustls config offering ALPN `h2` then `http/1.1`.
pub fn generate(hosts: &[String]) -> Result<Tls, Error> {
    let ca_key = KeyPair::generate().map_err(tls_err)?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(tls_err)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "fluxfleet-sim-ca");
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca_params.self_signed(&ca_key).map_err(tls_err)?;
    let issuer = Issuer::new(ca_params, ca_key);

    let mut names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    names.extend(
        hosts
            .iter()
            .filter(|h| !names.contains(h))
            .cloned()
            .collect::<Vec<_>>(),
    );
    let server_key = KeyPair::generate().map_err(tls_err)?;
    let mut params = CertificateParams::new(names).map_err(tls_err)?;
    params
        .distinguished_name
        .push(DnType::CommonName, "kube-apiserver");
    let server_cert = params.signed_by(&server_key, &issuer).map_err(tls_err)?;

    let chain = vec![
        CertificateDer::from(server_cert.der().to_vec()),
        CertificateDer::from(ca_cert.der().to_vec()),
    ];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls_err)?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(tls_err)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Tls {
        ca_pem: ca_cert.pem(),
        server_config: Arc::new(config),
    })
}
