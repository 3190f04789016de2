//! Turning kube, hyper, rustls and io errors into a connection phase and a message a person can
//! act on: "connection refused", "certificate signed by an unknown authority", "401 Unauthorized".

use std::error::Error as StdError;
use std::time::Duration;

use crate::fleet::Phase;
use crate::units::format_duration;

/// The TCP and TLS handshake did not finish in time.
#[derive(Debug, thiserror::Error)]
#[error("no connection within {}", format_duration(*.0))]
pub struct ConnectTimeout(pub Duration);

/// The error a connection attempt fails with when the server does not speak HTTP/2; the caller
/// falls back to HTTP/1.1.
#[derive(Debug, thiserror::Error)]
#[error("the server does not offer HTTP/2 (ALPN)")]
pub struct NotHttp2;

/// What one failure means for a cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub phase: Phase,
    pub message: String,
}

impl Failure {
    pub fn new(phase: Phase, message: impl Into<String>) -> Failure {
        Failure {
            phase,
            message: message.into(),
        }
    }
}

pub fn of_status(status: &kube::core::Status) -> Failure {
    let text = if status.message.is_empty() {
        status.reason.clone()
    } else {
        status.message.clone()
    };
    let phase = match status.code {
        401 => Phase::Unauthorized,
        403 => Phase::Forbidden,
        _ => Phase::ServerError,
    };
    let reason = http::StatusCode::from_u16(status.code)
        .ok()
        .and_then(|c| c.canonical_reason())
        .unwrap_or("");
    let text = crate::units::truncate(text.trim(), 300);
    let message = if text.is_empty() {
        format!("{} {reason}", status.code)
    } else {
        format!("{} {reason}: {text}", status.code)
    };
    Failure::new(phase, message)
}

pub fn of_kube(e: &kube::Error) -> Failure {
    match e {
        kube::Error::Api(status) => of_status(status),
        kube::Error::SerdeError(e) => Failure::new(
            Phase::ServerError,
            format!("the answer is not from a Kubernetes API server: {e}"),
        ),
        kube::Error::Auth(e) => Failure::new(
            Phase::Unauthorized,
            format!("cannot get credentials: {}", crate::errors::chain(e)),
        ),
        kube::Error::InferKubeconfig(e) => Failure::new(Phase::Invalid, crate::errors::chain(e)),
        kube::Error::RustlsTls(e) => Failure::new(Phase::Invalid, crate::errors::chain(e)),
        other => of_transport(other),
    }
}

/// Connection-level errors: the innermost cause decides.
pub fn of_transport(e: &(dyn StdError + 'static)) -> Failure {
    let mut source: Option<&(dyn StdError + 'static)> = Some(e);
    let mut innermost = e;
    while let Some(s) = source {
        if let Some(t) = s.downcast_ref::<ConnectTimeout>() {
            return Failure::new(Phase::TimedOut, t.to_string());
        }
        if let Some(tls) = s.downcast_ref::<rustls::Error>() {
            return Failure::new(Phase::TlsError, tls_message(tls));
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            // rustls reports handshake failures wrapped in io errors, sometimes twice (the
            // connector wraps tokio-rustls's), and an io error's source() skips what it wraps.
            let mut wrapped = io.get_ref();
            while let Some(inner) = wrapped {
                if let Some(tls) = inner.downcast_ref::<rustls::Error>() {
                    return Failure::new(Phase::TlsError, tls_message(tls));
                }
                wrapped = inner
                    .downcast_ref::<std::io::Error>()
                    .and_then(std::io::Error::get_ref);
            }
            if io.kind() == std::io::ErrorKind::TimedOut {
                return Failure::new(Phase::TimedOut, io.to_string());
            }
        }
        if let Some(h) = s.downcast_ref::<hyper::Error>()
            && h.is_timeout()
        {
            return Failure::new(Phase::TimedOut, h.to_string());
        }
        innermost = s;
        source = s.source();
    }
    let text = innermost.to_string();
    let text = text.trim_start_matches("tcp connect error: ");
    Failure::new(Phase::Unreachable, crate::units::truncate(text, 300))
}

fn tls_message(e: &rustls::Error) -> String {
    use rustls::{CertificateError, Error};
    match e {
        Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
            "TLS: certificate signed by an unknown authority".into()
        }
        Error::InvalidCertificate(CertificateError::Expired) => "TLS: certificate expired".into(),
        Error::InvalidCertificate(CertificateError::NotValidForName) => {
            "TLS: certificate is not valid for this server name".into()
        }
        other => format!("TLS: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_statuses_become_phases_with_readable_messages() {
        let status = kube::core::Status::failure("Unauthorized", "Unauthorized").with_code(401);
        let f = of_kube(&kube::Error::Api(status.boxed()));
        assert_eq!(
            f,
            Failure::new(Phase::Unauthorized, "401 Unauthorized: Unauthorized")
        );
        let status = kube::core::Status::failure("", "").with_code(503);
        let f = of_kube(&kube::Error::Api(status.boxed()));
        assert_eq!(
            f,
            Failure::new(Phase::ServerError, "503 Service Unavailable")
        );
    }

    #[test]
    fn io_and_tls_causes_are_found_inside_service_errors() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let f = of_kube(&kube::Error::Service(Box::new(refused)));
        assert_eq!(f.phase, Phase::Unreachable);
        assert!(f.message.contains("refused"), "{}", f.message);
        let tls = std::io::Error::other(rustls::Error::InvalidCertificate(
            rustls::CertificateError::UnknownIssuer,
        ));
        let f = of_kube(&kube::Error::Service(Box::new(tls)));
        assert_eq!(
            f,
            Failure::new(
                Phase::TlsError,
                "TLS: certificate signed by an unknown authority"
            )
        );
        // What the connector really returns: tokio-rustls's io error inside another.
        let twice = std::io::Error::other(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidForName),
        ));
        let f = of_kube(&kube::Error::Service(Box::new(twice)));
        assert_eq!(f.phase, Phase::TlsError, "{}", f.message);
        let slow = ConnectTimeout(Duration::from_secs(15));
        let f = of_kube(&kube::Error::Service(Box::new(slow)));
        assert_eq!(f, Failure::new(Phase::TimedOut, "no connection within 15s"));
    }
}
