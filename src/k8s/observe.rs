//! A tower layer that tells the cluster task about every response: which resource it was for,
//! its status and its HTTP version. kube's watcher says nothing when a watch reconnects
//! successfully after an error (it only reports errors and object changes); this is how a
//! recovered cluster is seen as recovered without waiting for its next object change.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::{Request, Response, Version};
use tokio::sync::mpsc;

/// One response as seen by the transport.
#[derive(Debug)]
pub struct Observation {
    /// The last path segment of the request (`kustomizations`, `v1`, `apis` …).
    pub resource: String,
    pub watch: bool,
    pub status: u16,
    pub version: Version,
}

/// Where observations go (the cluster task). Dropped quietly once nobody listens.
pub type Observer = mpsc::UnboundedSender<Observation>;

#[derive(Clone)]
pub struct ObserveLayer {
    observer: Observer,
}

impl ObserveLayer {
    pub fn new(observer: Observer) -> ObserveLayer {
        ObserveLayer { observer }
    }
}

impl<S> tower::Layer<S> for ObserveLayer {
    type Service = Observe<S>;

    fn layer(&self, inner: S) -> Observe<S> {
        Observe {
            inner,
            observer: self.observer.clone(),
        }
    }
}

#[derive(Clone)]
pub struct Observe<S> {
    inner: S,
    observer: Observer,
}

impl<S, B, R> tower::Service<Request<B>> for Observe<S>
where
    S: tower::Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<R>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let uri = request.uri();
        let resource = uri
            .path()
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_string();
        let watch = uri
            .query()
            .is_some_and(|q| q.split('&').any(|p| p == "watch=true" || p == "watch=1"));
        let observer = self.observer.clone();
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await?;
            let _ = observer.send(Observation {
                resource,
                watch,
                status: response.status().as_u16(),
                version: response.version(),
            });
            Ok(response)
        })
    }
}
