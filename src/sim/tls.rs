//! A certificate authority generated at start, and the server certificate it signs. Clients get
//! the CA as `certificate-authority-data`, exactly like a real cluster's kubeconfig.
//!
//! Clients may also authenticate with a client certificate the simulator issued
//! ([`Tls::issue`]), X.509 v3 or v1 — the API server (Go's crypto/x509) takes both. The server
//! asks for a certificate without requiring one, accepts only those it issued, and checks the
//! handshake signature against the key it issued them for.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    PublicKeyData, SigningKey,
};
use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{
    CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, SubjectPublicKeyInfoDer, UnixTime,
};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, ServerConfig, SignatureScheme};

use super::Error;
use super::world::Role;

/// The generated CA (PEM, for kubeconfigs) and the TLS configuration of the server.
pub struct Tls {
    pub ca_pem: String,
    pub server_config: Arc<ServerConfig>,
    ca: Issuer<'static, KeyPair>,
    ca_subject: Vec<u8>,
    pub clients: Arc<ClientCerts>,
}

/// Which X.509 version a client certificate is issued in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CertVersion {
    /// With extensions (key usage, extended key usage), as `kubeadm` issues them.
    V3,
    /// Without a version field or extensions, as some older PKIs still issue them.
    V1,
}

/// Who a client certificate authenticates: a role on one cluster.
#[derive(Clone, Debug)]
pub struct ClientIdentity {
    pub cluster: String,
    pub role: Role,
}

impl ClientIdentity {
    /// The certificate's subject common name: the user name the API server sees.
    pub fn common_name(&self) -> String {
        format!("fluxfleet-{}-{}", self.cluster, self.role.name())
    }
}

/// A client certificate issued: the public key it was issued for, and who it authenticates.
struct Issued {
    spki: Vec<u8>,
    /// The key itself (the SubjectPublicKeyInfo's bits), which TLS 1.2 verifies against.
    key: Vec<u8>,
    who: ClientIdentity,
}

/// The client certificates issued so far, by their DER.
#[derive(Default)]
pub struct ClientCerts {
    issued: Mutex<HashMap<Vec<u8>, Issued>>,
}

impl ClientCerts {
    /// Who the certificate `der` authenticates, if the simulator issued it.
    pub fn identity(&self, der: &[u8]) -> Option<ClientIdentity> {
        let issued = self.issued.lock().unwrap_or_else(|p| p.into_inner());
        issued.get(der).map(|i| i.who.clone())
    }

    fn spki(&self, der: &[u8]) -> Option<Vec<u8>> {
        let issued = self.issued.lock().unwrap_or_else(|p| p.into_inner());
        issued.get(der).map(|i| i.spki.clone())
    }

    fn key(&self, der: &[u8]) -> Option<Vec<u8>> {
        let issued = self.issued.lock().unwrap_or_else(|p| p.into_inner());
        issued.get(der).map(|i| i.key.clone())
    }
}

impl Tls {
    /// Issues a client certificate for the PKCS#8 key `key_pem` (RSA or ECDSA), authenticating
    /// `who`; returns it as PEM.
    pub fn issue(
        &self,
        key_pem: &str,
        who: ClientIdentity,
        version: CertVersion,
    ) -> Result<String, Error> {
        let key = KeyPair::from_pem(key_pem).map_err(tls_err)?;
        let name = who.common_name();
        let der = match version {
            CertVersion::V3 => {
                let mut params = CertificateParams::new(Vec::<String>::new()).map_err(tls_err)?;
                params.distinguished_name.push(DnType::CommonName, name);
                params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
                params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
                params
                    .signed_by(&key, &self.ca)
                    .map_err(tls_err)?
                    .der()
                    .to_vec()
            }
            CertVersion::V1 => self.v1(&key, &name)?,
        };
        let pem = pem_text("CERTIFICATE", &der);
        let mut issued = self
            .clients
            .issued
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        issued.insert(
            der,
            Issued {
                spki: key.subject_public_key_info(),
                key: key.der_bytes().to_vec(),
                who,
            },
        );
        Ok(pem)
    }

    /// An X.509 v1 certificate for `key`: no version field, no extensions, signed by the CA
    /// (ECDSA P-256 with SHA-256).
    fn v1(&self, key: &KeyPair, common_name: &str) -> Result<Vec<u8>, Error> {
        let algorithm = tlv(SEQUENCE, &tlv(OID, ECDSA_SHA256));
        let subject = name(common_name);
        let validity = [
            tlv(UTC_TIME, b"200101000000Z"),
            tlv(UTC_TIME, b"491231235959Z"),
        ]
        .concat();
        let serial = {
            let mut bytes = [0u8; 8];
            ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
                .map_err(|_| Error::Tls("no randomness for a serial number".into()))?;
            bytes[0] &= 0x7f;
            bytes[0] |= 0x01;
            tlv(INTEGER, &bytes)
        };
        let tbs = tlv(
            SEQUENCE,
            &[
                serial,
                algorithm.clone(),
                self.ca_subject.clone(),
                tlv(SEQUENCE, &validity),
                subject,
                key.subject_public_key_info(),
            ]
            .concat(),
        );
        let signature = self.ca.key().sign(&tbs).map_err(tls_err)?;
        let bits = [&[0u8][..], &signature].concat();
        Ok(tlv(
            SEQUENCE,
            &[tbs, algorithm, tlv(BIT_STRING, &bits)].concat(),
        ))
    }
}

// The few DER tags a v1 certificate needs (X.690), and the two OIDs: ecdsa-with-SHA256
// (1.2.840.10045.4.3.2) and commonName (2.5.4.3).
const INTEGER: u8 = 0x02;
const BIT_STRING: u8 = 0x03;
const OID: u8 = 0x06;
const UTF8: u8 = 0x0c;
const UTC_TIME: u8 = 0x17;
const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;
const ECDSA_SHA256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02];
const COMMON_NAME: &[u8] = &[0x55, 0x04, 0x03];

/// One DER element: its tag, its length (short form below 128, else long form with as few
/// bytes as it takes), its contents.
fn tlv(tag: u8, contents: &[u8]) -> Vec<u8> {
    let len = contents.len();
    let mut out = vec![tag];
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let width = (usize::BITS - len.leading_zeros()).div_ceil(8) as usize;
        out.push(0x80 | width as u8);
        out.extend_from_slice(&len.to_be_bytes()[size_of::<usize>() - width..]);
    }
    out.extend_from_slice(contents);
    out
}

/// An X.509 `Name` holding one common name as a UTF8String: how rcgen writes the CA's subject
/// (`DnType::CommonName` from a `&str`), and the subject of a v1 client certificate.
fn name(common_name: &str) -> Vec<u8> {
    let attribute = [tlv(OID, COMMON_NAME), tlv(UTF8, common_name.as_bytes())].concat();
    tlv(SEQUENCE, &tlv(SET, &tlv(SEQUENCE, &attribute)))
}

fn pem_text(label: &str, der: &[u8]) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// Asks every client for a certificate and requires none, like the API server: a certificate
/// the simulator did not issue passes the handshake (its signature checked as usual) and
/// authenticates nobody — the request is then unauthorized unless it carries a valid token.
/// An issued one (v3 or v1) is checked against the key it was issued for.
#[derive(Debug)]
struct Verifier {
    clients: Arc<ClientCerts>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl std::fmt::Debug for ClientCerts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientCerts")
    }
}

impl ClientCertVerifier for Verifier {
    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let Some(key) = self.clients.key(cert.as_ref()) else {
            return rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms);
        };
        let bad = || rustls::Error::InvalidCertificate(rustls::CertificateError::BadSignature);
        // TLS 1.2 does not say which curve or padding: try each algorithm of the scheme.
        let (_, candidates) = self
            .algorithms
            .mapping
            .iter()
            .find(|(scheme, _)| *scheme == dss.scheme)
            .ok_or_else(bad)?;
        candidates
            .iter()
            .find(|alg| alg.verify_signature(&key, message, dss.signature()).is_ok())
            .map(|_| HandshakeSignatureValid::assertion())
            .ok_or_else(bad)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let Some(spki) = self.clients.spki(cert.as_ref()) else {
            return rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms);
        };
        rustls::crypto::verify_tls13_signature_with_raw_key(
            message,
            &SubjectPublicKeyInfoDer::from(spki.as_slice()),
            dss,
            &self.algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

fn tls_err(e: impl std::fmt::Display) -> Error {
    Error::Tls(e.to_string())
}

/// The CA's common name.
const CA_NAME: &str = "fluxfleet-sim-ca";

/// The domain of the clusters' TLS names (`<cluster>.clusters.fluxfleet.sim`, see
/// `kubeconfig::tls_name`).
pub const CLUSTER_DOMAIN: &str = "clusters.fluxfleet.sim";

/// Generates a fresh CA and a server certificate valid for `localhost`, `127.0.0.1`, `::1`, every
/// cluster's TLS name and the extra `hosts`, and a rustls config offering ALPN `h2` then
/// `http/1.1`.
pub fn generate(hosts: &[String]) -> Result<Tls, Error> {
    let ca_key = KeyPair::generate().map_err(tls_err)?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(tls_err)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, CA_NAME);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca_params.self_signed(&ca_key).map_err(tls_err)?;
    let issuer = Issuer::new(ca_params, ca_key);

    let mut names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
        format!("*.{CLUSTER_DOMAIN}"),
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
    let clients = Arc::new(ClientCerts::default());
    let verifier = Verifier {
        clients: clients.clone(),
        algorithms: provider.signature_verification_algorithms,
    };
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls_err)?
        .with_client_cert_verifier(Arc::new(verifier))
        .with_single_cert(chain, key)
        .map_err(tls_err)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    // One session ticket per handshake, as Go's crypto/tls (the kube-apiserver's) sends; rustls
    // sends two. Stateless tickets, as Go's: rustls' default keeps sessions in a 256-entry
    // memory, and a fleet's clusters could not resume.
    config.send_tls13_tickets = 1;
    config.ticketer = rustls::crypto::ring::Ticketer::new().map_err(tls_err)?;
    let ca_subject = name(CA_NAME);
    Ok(Tls {
        ca_pem: ca_cert.pem(),
        server_config: Arc::new(config),
        ca: issuer,
        ca_subject,
        clients,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code
    use super::*;

    #[test]
    fn lengths_take_the_shortest_form() {
        assert_eq!(tlv(SEQUENCE, &[7; 3])[..2], [0x30, 3]);
        assert_eq!(tlv(SEQUENCE, &[0; 200])[..3], [0x30, 0x81, 200]);
        assert_eq!(tlv(SEQUENCE, &[0; 300])[..4], [0x30, 0x82, 0x01, 0x2c]);
    }

    #[test]
    fn a_v1_certificate_names_the_ca_as_rcgen_wrote_it() {
        let tls = generate(&[]).unwrap();
        let ca = der_of_pem(&tls.ca_pem);
        let subject = name(CA_NAME);
        // Self-signed: the name appears as issuer and as subject.
        let found = ca.windows(subject.len()).filter(|w| *w == subject).count();
        assert_eq!(found, 2);
    }

    fn der_of_pem(pem: &str) -> Vec<u8> {
        use base64::Engine as _;
        let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        base64::engine::general_purpose::STANDARD
            .decode(body)
            .unwrap()
    }
}
