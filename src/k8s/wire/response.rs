//! An answer's body, from either client: hyper's over HTTP/1.1, or ours over HTTP/2
//! (`fluxfleet_h2`, a crate of its own).

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body as HttpBody, Frame, Incoming, SizeHint};
use tower::BoxError;

pub use fluxfleet_h2::H2Body;

/// An answer's body, whichever client carried it.
#[derive(Debug)]
pub enum ResponseBody {
    Hyper(Incoming),
    H2(H2Body),
}

impl HttpBody for ResponseBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.get_mut() {
            ResponseBody::Hyper(body) => Pin::new(body).poll_frame(cx).map_err(Into::into),
            ResponseBody::H2(body) => Pin::new(body).poll_frame(cx).map_err(Into::into),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Hyper(body) => body.is_end_stream(),
            ResponseBody::H2(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Hyper(body) => body.size_hint(),
            ResponseBody::H2(_) => SizeHint::default(),
        }
    }
}

impl ResponseBody {
    /// Whether the server said this answer's connection is going away (HTTP/2 GOAWAY): the
    /// answer goes on, and new requests go to a new connection. HTTP/1.1 has no such word.
    pub fn going_away(&self) -> bool {
        match self {
            ResponseBody::Hyper(_) => false,
            ResponseBody::H2(body) => body.going_away(),
        }
    }
}

#[cfg(test)]
impl ResponseBody {
    /// A body that yields `data`, then ends (`broken` None) or fails as a broken stream does.
    pub fn scripted(data: &[u8], broken: Option<&str>) -> ResponseBody {
        ResponseBody::H2(fluxfleet_h2::scripted(data, broken))
    }

    /// A body that yields `data`, then waits on a connection going away (GOAWAY).
    pub fn scripted_going_away(data: &[u8]) -> ResponseBody {
        ResponseBody::H2(fluxfleet_h2::scripted_going_away(data))
    }
}
