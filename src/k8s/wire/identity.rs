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

/// What is wrong with a kubeconfig's client certificate or key: the kubeconfig (or the file it
/// names) is to be fixed. Never what the certificate or key holds.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    #[error("{0}: not base64")]
    NotBase64(&'static str),
    #[error("{field} {path}: {why}")]
    File {
        field: &'static str,
        path: String,
        why: String,
    },
    #[error("{field} {path}: {size} bytes is too large")]
    TooLarge {
        field: &'static str,
        path: String,
        size: u64,
    },
    #[error("client certificate without a client key (client-key or client-key-data)")]
    NoKey,
    #[error(
        "client key without a client certificate (client-certificate or client-certificate-data)"
    )]
    NoCertificate,
    #[error("client key: not a key type TLS can sign with (RSA, ECDSA P-256 or P-384, Ed25519)")]
    KeyType,
    #[error("client certificate: malformed DER ({0})")]
    Der(String),
    #[error("client certificate: not an X.509 certificate")]
    NotX509,
    #[error("client certificate and client key do not match")]
    Mismatch,
    #[error("client key: its public key cannot be read")]
    NoPublicKey,
    #[error("client certificate: not PEM")]
    CertificateNotPem,
    #[error("client certificate: no CERTIFICATE block in it")]
    NoCertificateBlock,
    #[error("client key: not PEM")]
    KeyNotPem,
    #[error("client key: no PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY block in it")]
    NoKeyBlock,
}

/// The client identity of `auth`, if it has one.
pub fn load(auth: &AuthInfo) -> Result<Option<Arc<CertifiedKey>>, IdentityError> {
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
        (Some(_), None) => return Err(IdentityError::NoKey),
        (None, Some(_)) => return Err(IdentityError::NoCertificate),
        (Some(cert), Some(key)) => (cert, key),
    };
    let chain = certificates(&cert)?;
    let key = private_key(&key)?;
    let signer =
        crypto::ring::sign::any_supported_type(&key).map_err(|_| IdentityError::KeyType)?;
    // rustls compares the two with webpki, which reads v3 certificates only: compare here.
    for certificate in &chain {
        crate::der::check_certificate(certificate.as_ref())
            .map_err(|why| IdentityError::Der(why.to_string()))?;
    }
    let leaf = chain.first().map(|c| c.as_ref()).unwrap_or_default();
    let spki = crate::der::certificate_spki(leaf).ok_or(IdentityError::NotX509)?;
    match signer.public_key() {
        Some(public) if public.as_ref() == spki => {}
        Some(_) => return Err(IdentityError::Mismatch),
        None => return Err(IdentityError::NoPublicKey),
    }
    Ok(Some(Arc::new(CertifiedKey::new(chain, signer))))
}

/// PEM from base64 `data` or from the file at `path` (data wins, as in kubectl).
fn read(
    data_field: &'static str,
    data: Option<&str>,
    path_field: &'static str,
    path: Option<&str>,
) -> Result<Option<Vec<u8>>, IdentityError> {
    if let Some(data) = data.filter(|d| !d.trim().is_empty()) {
        let compact: String = data.split_whitespace().collect();
        return base64::engine::general_purpose::STANDARD
            .decode(compact)
            .map(Some)
            .map_err(|_| IdentityError::NotBase64(data_field));
    }
    let Some(path) = path.filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    let file = |e: std::io::Error| IdentityError::File {
        field: path_field,
        path: path.to_string(),
        why: e.to_string(),
    };
    let size = std::fs::metadata(path).map_err(file)?.len();
    if size > FILE_LIMIT {
        return Err(IdentityError::TooLarge {
            field: path_field,
            path: path.to_string(),
            size,
        });
    }
    std::fs::read(path).map(Some).map_err(file)
}

fn sections(pem: &[u8]) -> impl Iterator<Item = Result<(SectionKind, Vec<u8>), ()>> + '_ {
    <(SectionKind, Vec<u8>)>::pem_slice_iter(pem).map(|r| r.map_err(|_| ()))
}

fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, IdentityError> {
    let mut chain = Vec::new();
    for section in sections(pem) {
        match section {
            Ok((SectionKind::Certificate, der)) => chain.push(CertificateDer::from(der)),
            Ok(_) => {}
            Err(()) => return Err(IdentityError::CertificateNotPem),
        }
    }
    if chain.is_empty() {
        return Err(IdentityError::NoCertificateBlock);
    }
    Ok(chain)
}

fn private_key(pem: &[u8]) -> Result<PrivateKeyDer<'static>, IdentityError> {
    for section in sections(pem) {
        match section {
            Ok((SectionKind::PrivateKey, der)) => return Ok(PrivateKeyDer::Pkcs8(der.into())),
            Ok((SectionKind::RsaPrivateKey, der)) => return Ok(PrivateKeyDer::Pkcs1(der.into())),
            Ok((SectionKind::EcPrivateKey, der)) => return Ok(PrivateKeyDer::Sec1(der.into())),
            Ok(_) => {}
            Err(()) => return Err(IdentityError::KeyNotPem),
        }
    }
    Err(IdentityError::NoKeyBlock)
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
