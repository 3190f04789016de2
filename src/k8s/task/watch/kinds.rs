//! A cluster's kinds' watches on its one connection, polled in turn by the cluster's task.

use std::sync::Arc;

use super::super::connect::TaskShared;
use super::super::kind_watch::{KindWatch, Step};
use crate::fleet::{FluxKind, Lists, ServedKind};
use crate::k8s::wire::api::Http;

/// Every served kind's list-then-watch on the cluster's one connection, merged: each step
/// tagged with its kind.
pub(super) fn kind_watches(
    http: Arc<Http>,
    served: &[ServedKind],
    shared: &TaskShared,
    seed: u64,
) -> Kinds {
    let watches = served.iter().enumerate().map(|(i, s)| {
        let watch = KindWatch::new(
            http.clone(),
            s.kind,
            s.version.clone(),
            (shared.chunk_size, shared.max_objects),
            // A one-shot read lists in pages, as `kubectl get` does: streaming pays for a watch
            // that stays open, and a read that lets go at once is cheaper paged (2,000 × 30:
            // 7 % of the CPU; docs/performance.md, "Ten thousand clusters").
            if shared.streaming_lists && !shared.list_only {
                Lists::Streaming
            } else {
                Lists::Paged
            },
            shared.max_backoff,
            seed.wrapping_add(i as u64),
        );
        (watch, Listing::Running)
    });
    Kinds {
        watches: watches.collect(),
        list_only: shared.list_only,
        next: 0,
    }
}

/// A cluster's kinds' watches, polled in turn by the cluster's task: one stream of their steps,
/// each tagged with its kind. Held in place rather than as a future each in a `SelectAll` (a
/// boxed stream and a task node a kind: ~1.4 KiB a cluster).
pub(super) struct Kinds {
    watches: Box<[(KindWatch, Listing)]>,
    list_only: bool,
    /// The kind polled first next time: each gets its turn however busy the others are.
    next: usize,
}

impl futures::Stream for Kinds {
    type Item = (FluxKind, Step);

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<(FluxKind, Step)>> {
        use std::task::Poll;
        let kinds = self.get_mut();
        let count = kinds.watches.len();
        if count == 0 {
            return Poll::Ready(None);
        }
        for turn in 0..count {
            let at = (kinds.next + turn) % count;
            let (watch, listing) = &mut kinds.watches[at];
            let step = match listing {
                // Listed, and not to be watched: the kind is as live as a list makes it.
                Listing::Listed => {
                    *listing = Listing::Done;
                    Step::Watching
                }
                Listing::Done => continue,
                Listing::Running => match watch.poll_step(cx) {
                    Poll::Ready(step) => {
                        if kinds.list_only && matches!(step, Step::Listed(..)) {
                            *listing = Listing::Listed;
                        }
                        step
                    }
                    Poll::Pending => continue,
                },
            };
            kinds.next = (at + 1) % count;
            return Poll::Ready(Some((watch.kind(), step)));
        }
        Poll::Pending
    }
}

/// Where a kind's list-then-watch is, when it is only to be listed (`engine.list_only`).
#[derive(Clone, Copy)]
enum Listing {
    Running,
    Listed,
    Done,
}
