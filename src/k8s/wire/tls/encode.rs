//! Encoding what rustls writes into room of our own: how much room it asked for, grown once.

use std::io;

use rustls::unbuffered::{EncodeError, EncryptError, InsufficientSizeError};

/// Why rustls wrote nothing into the room it was given.
pub(super) enum Short {
    /// It needs this many bytes.
    Room(usize),
    Failed(io::Error),
}

impl From<EncodeError> for Short {
    fn from(e: EncodeError) -> Short {
        match e {
            EncodeError::InsufficientSize(InsufficientSizeError { required_size }) => {
                Short::Room(required_size)
            }
            other => Short::Failed(io::Error::other(other.to_string())),
        }
    }
}

impl From<EncryptError> for Short {
    fn from(e: EncryptError) -> Short {
        match e {
            EncryptError::InsufficientSize(InsufficientSizeError { required_size }) => {
                Short::Room(required_size)
            }
            other => Short::Failed(io::Error::other(other.to_string())),
        }
    }
}

/// Encodes into the end of `out` with `room` bytes, or as many as `encode` says it needs;
/// `out` is unchanged when it fails.
pub(super) fn queue(
    out: &mut Vec<u8>,
    mut room: usize,
    mut encode: impl FnMut(&mut [u8]) -> Result<usize, Short>,
) -> io::Result<()> {
    let at = out.len();
    loop {
        out.resize(at + room, 0);
        match encode(&mut out[at..]) {
            Ok(n) => {
                out.truncate(at + n);
                return Ok(());
            }
            Err(Short::Room(needed)) if needed > room => room = needed,
            Err(Short::Room(_)) => {
                out.truncate(at);
                return Err(io::Error::other("TLS asked for less room than it had"));
            }
            Err(Short::Failed(e)) => {
                out.truncate(at);
                return Err(e);
            }
        }
    }
}
