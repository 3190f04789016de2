//! Response bodies of the simulated API server.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::UnsyncBoxBody};
use hyper::{Response, StatusCode, header};

pub type Body = UnsyncBoxBody<Bytes, std::io::Error>;

pub fn full(bytes: Bytes) -> Body {
    Full::new(bytes)
        .map_err(|never: Infallible| match never {})
        .boxed_unsync()
}

pub fn json(code: StatusCode, bytes: Bytes) -> Response<Body> {
    let mut r = Response::new(full(bytes));
    *r.status_mut() = code;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    r
}
