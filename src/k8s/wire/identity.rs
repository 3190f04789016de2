//! A kubeconfig user's client certificate and key, read the way kubectl reads them (Go's
//! `tls.X509KeyPair`): the certificate from `client-certificate-data` or `client-certificate`, the
//! key from `client-key-data` or `client-key`; PEM blocks that are neither certificates nor
//! private keys (`EC PARAMETERS`, what `openssl ecparam -genkey` writes first) are skipped;
//! RSA keys in PKCS#1 or PKCS#8, EC keys in SEC1 or PKCS#8; X.509 v1 certificates as well as v3.
//! The key must belong to the certificate. Every problem is a credential problem, named as one.

use std::sync::Arc;

use base64::Engine as _;
use kube::config::AuthInfo;
use rustls::client::ResolvesClientCert;
use rustls::pki_types::pem::{PemObject, SectionKind};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use rustls::{SignatureScheme, crypto};
use secrecy::ExposeSecret;

/// Certificate and key files larger than this are not certificates or keys.
const FILE_LIMIT: u64 = 1024 * 1024;

/// The client identity of `auth`, if it has one.
pub fn load(auth: &AuthInfo) -> Result<Option<Arc<CertifiedKey>>, String> {
    let cert = read(
        "client-certificate-data",
        auth.client_certificate_data.as_deref(),
        "client-certificate",
        auth.client_certificate.as_deref(),
    )?;
    let key = read(
        "client-key-data",
        auth.client_key_data.as_ref().map(|k| k.expose_secret()),
        "client-key",
        auth.client_key.as_deref(),
    )?;
    let (cert, key) = match (cert, key) {
        (None, None) => return Ok(None),
        (Some(_), None) => {
            return Err(
                "client certificate without a client key (client-key or client-key-data)".into(),
            );
        }
        (None, Some(_)) => {
            return Err(
                "client key without a client certificate (client-certificate or client-certificate-data)"
                    .into(),
            );
        }
        (Some(cert), Some(key)) => (cert, key),
    };
    let chain = certificates(&cert)?;
    let key = private_key(&key)?;
    let signer = crypto::ring::sign::any_supported_type(&key).map_err(|_| {
        "client key: not a key type TLS can sign with (RSA, ECDSA P-256 or P-384, Ed25519)"
            .to_string()
    })?;
    // rustls compares the two with webpki, which reads v3 certificates only: compare here.
    for certificate in &chain {
        crate::der::check_certificate(certificate.as_ref())
            .map_err(|why| format!("client certificate: malformed DER ({why})"))?;
    }
    let leaf = chain.first().map(|c| c.as_ref()).unwrap_or_default();
    let spki =
        crate::der::certificate_spki(leaf).ok_or("client certificate: not an X.509 certificate")?;
    match signer.public_key() {
        Some(public) if public.as_ref() == spki => {}
        Some(_) => return Err("client certificate and client key do not match".into()),
        None => return Err("client key: its public key cannot be read".into()),
    }
    Ok(Some(Arc::new(CertifiedKey::new(chain, signer))))
}

/// PEM from base64 `data` or from the file at `path` (data wins, as in kubectl).
fn read(
    data_field: &str,
    data: Option<&str>,
    path_field: &str,
    path: Option<&str>,
) -> Result<Option<Vec<u8>>, String> {
    if let Some(data) = data.filter(|d| !d.trim().is_empty()) {
        let compact: String = data.split_whitespace().collect();
        return base64::engine::general_purpose::STANDARD
            .decode(compact)
            .map(Some)
            .map_err(|_| format!("{data_field}: not base64"));
    }
    let Some(path) = path.filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    let size = std::fs::metadata(path)
        .map_err(|e| format!("{path_field} {path}: {e}"))?
        .len();
    if size > FILE_LIMIT {
        return Err(format!("{path_field} {path}: {size} bytes is too large"));
    }
    std::fs::read(path)
        .map(Some)
        .map_err(|e| format!("{path_field} {path}: {e}"))
}

fn sections(pem: &[u8]) -> impl Iterator<Item = Result<(SectionKind, Vec<u8>), ()>> + '_ {
    <(SectionKind, Vec<u8>)>::pem_slice_iter(pem).map(|r| r.map_err(|_| ()))
}

fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let mut chain = Vec::new();
    for section in sections(pem) {
        match section {
            Ok((SectionKind::Certificate, der)) => chain.push(CertificateDer::from(der)),
            Ok(_) => {}
            Err(()) => return Err("client certificate: not PEM".into()),
        }
    }
    if chain.is_empty() {
        return Err("client certificate: no CERTIFICATE block in it".into());
    }
    Ok(chain)
}

fn private_key(pem: &[u8]) -> Result<PrivateKeyDer<'static>, String> {
    for section in sections(pem) {
        match section {
            Ok((SectionKind::PrivateKey, der)) => return Ok(PrivateKeyDer::Pkcs8(der.into())),
            Ok((SectionKind::RsaPrivateKey, der)) => return Ok(PrivateKeyDer::Pkcs1(der.into())),
            Ok((SectionKind::EcPrivateKey, der)) => return Ok(PrivateKeyDer::Sec1(der.into())),
            Ok(_) => {}
            Err(()) => return Err("client key: not PEM".into()),
        }
    }
    Err("client key: no PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY block in it".into())
}

/// Always presents the one identity, whatever the server asks for (as kubectl does).
#[derive(Debug)]
pub struct Fixed(pub Arc<CertifiedKey>);

impl ResolvesClientCert for Fixed {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        _sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        Some(self.0.clone())
    }

    fn has_certs(&self) -> bool {
        true
    }
}
