//! The wire: the HTTP/2 client (`fluxfleet_h2`, a crate of its own) and hyper's for HTTP/1.1,
//! TLS and proxies, client identities and exec credentials, plain requests on a cluster's
//! service and what their failures mean. Nothing here knows Flux.

pub(in crate::k8s) mod api;
pub(in crate::k8s) mod backoff;
pub(in crate::k8s) mod body;
pub mod errors;
pub(in crate::k8s) mod exec;
pub(in crate::k8s) mod identity;
pub(in crate::k8s) mod proxy;
pub(in crate::k8s) mod response;
pub(in crate::k8s) mod status;
pub(in crate::k8s) mod tls;
pub mod transport;
