//! The cluster's faults on the way of every request, as its server would show them: a throttled
//! one has seats (API Priority and Fairness) and turns away a request that finds none, a slow one
//! answers late, a failing one answers 503 to a share of requests.

use std::sync::atomic::Ordering;

use bytes::Bytes;
use http::{Response, StatusCode, header};

use super::body::Body;
use super::status::{ApiError, RETRY_AFTER};
use super::world::Cluster;

/// A request being answered on a cluster, counted while it is (the `throttle` fault's seats).
pub struct Seat<'c>(&'c Cluster);

impl Drop for Seat<'_> {
    fn drop(&mut self) {
        self.0.counters.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The request's seat, once the cluster's faults let it through: 429 when a throttled cluster
/// has no seat left, the `slow` delay (the seat held meanwhile), 503 for a share of requests.
pub async fn on_the_way(cluster: &Cluster) -> Result<Seat<'_>, ApiError> {
    let faults = cluster.faults();
    let counters = &cluster.counters;
    let before = counters.in_flight.fetch_add(1, Ordering::AcqRel);
    let seat = Seat(cluster);
    if faults
        .throttle
        .is_some_and(|seats| before >= u64::from(seats))
    {
        counters.throttled.fetch_add(1, Ordering::Relaxed);
        return Err(ApiError::too_many_requests());
    }
    if let Some(delay) = faults.slow {
        tokio::time::sleep(delay).await;
    }
    if faults.error5xx.is_some_and(|p| draw() < p) {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            "the server is currently unable to handle the request",
        ));
    }
    Ok(seat)
}

/// A request turned away as kube-apiserver's API Priority and Fairness answers it: its words as
/// plain text, no Status, and when to ask again in `Retry-After`.
pub fn throttled(e: &ApiError) -> Response<Body> {
    let mut response = Response::new(super::body::full(Bytes::from(format!("{}\n", e.message))));
    *response.status_mut() = e.code;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(header::RETRY_AFTER, header::HeaderValue::from(RETRY_AFTER));
    response
}

/// A cheap, non-reproducible draw in [0, 1) for fault injection.
fn draw() -> f64 {
    use std::sync::atomic::AtomicU64;
    static SEQ: AtomicU64 = AtomicU64::new(0x2545_f491_4f6c_dd1d);
    let mut x = SEQ.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed);
    x = (x ^ (x >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    (x >> 11) as f64 / (1u64 << 53) as f64
}
