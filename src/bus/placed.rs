//! Making a consumer — a read, a watch — on a NATS cluster that may have lost a node: asked
//! again beside the first ask while it goes unanswered, not after it gives up.
//!
//! A reader's consumer is one copy, on one node of the stream's. Before nats-server 2.12 a
//! cluster that has lost a node places it on any of the stream's nodes, the lost one too
//! (nats-io/nats-server#3820, #7165; 2.9's `createGroupForConsumer` shuffles all the stream's
//! peers), and a consumer placed there is never answered for. Each ask lands on a live node two
//! times in three. Asked one after another, each waited for five seconds, eight asks lost in a
//! row failed a read one time in 6,561; the failover test makes some hundreds of consumers
//! while a node is away (one run's log: 141 asks unanswered), so about one run in twenty
//! failed. Now an ask is made each second beside those still waiting, each left five seconds
//! to answer: one placed on the lost node costs a second, and a read fails only if twenty-four
//! in a row are lost, one in 3^24.

use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;

use super::BusError;

/// How long an ask waits for its answer before another is made beside it.
const BESIDE_AFTER: Duration = Duration::from_secs(1);

/// How long an ask is left to answer: a server merely slow answers well within it.
const EACH: Duration = Duration::from_secs(5);

/// Asks at most: with [`BESIDE_AFTER`] between them, the last is made ~23 s after the first,
/// past a leader's election (its timeout is 4–9 s) and the ten seconds a cluster waits before it
/// says it has none; the whole is bounded by ~28 s.
const ASKS: usize = 24;

/// How soon an ask that was refused is made again: not a spin on an answer that comes at once.
const AFTER_NO: Duration = Duration::from_millis(250);

/// Refusals at most: a refusal that stays (too few nodes for the replicas asked, no right to
/// the stream) is said within ~2 s, as before asks were made beside each other.
const REFUSALS: usize = 8;

/// Makes a consumer — or anything a NATS cluster may leave unanswered while it has lost a
/// node — asking again one second after each ask while none has answered, a bounded number of
/// times, and a quarter of a second after one says no (a leader may be being elected). The
/// first yes is taken and the other asks dropped; the last why names `what`.
pub(crate) async fn placed<T, E, F, Fut>(what: &str, mut make: F) -> Result<T, BusError>
where
    E: std::fmt::Display,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let mut asking: FuturesUnordered<tokio::time::Timeout<Fut>> = FuturesUnordered::new();
    let (mut asked, mut refused) = (0, 0);
    let mut why = String::new();
    let next = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(next);
    loop {
        let more = asked < ASKS && refused < REFUSALS;
        tokio::select! {
            // Answers first: one that came with the next ask's time is not left for it.
            biased;
            Some(answer) = asking.next() => match answer {
                Ok(Ok(made)) => return Ok(made),
                Ok(Err(e)) => {
                    why = e.to_string();
                    refused += 1;
                    tracing::debug!(what, error = %why, asked, "an ask of the bus refused");
                    let sooner = tokio::time::Instant::now() + AFTER_NO;
                    if sooner < next.deadline() {
                        next.as_mut().reset(sooner);
                    }
                }
                Err(_) => {
                    why = format!("no answer within {}s", EACH.as_secs());
                    tracing::debug!(what, asked, "an ask of the bus unanswered");
                }
            },
            () = &mut next, if more => {
                asked += 1;
                asking.push(tokio::time::timeout(EACH, make()));
                next.as_mut().reset(tokio::time::Instant::now() + BESIDE_AFTER);
            }
            else => {
                return Err(BusError::Unanswered {
                    what: what.to_string(),
                    why,
                    tries: asked,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_ask_placed_on_a_lost_node_costs_a_second_not_its_whole_wait() {
        // Placed on a lost node the first time, on a live one the second.
        let began = tokio::time::Instant::now();
        let mut asks = 0;
        let made = placed("reading", || {
            asks += 1;
            let lost = asks == 1;
            async move {
                if lost {
                    std::future::pending::<()>().await;
                }
                Ok::<_, std::io::Error>(asks)
            }
        })
        .await;
        assert_eq!(made, Ok(2));
        assert_eq!(began.elapsed(), BESIDE_AFTER);
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_answer_is_taken_when_it_comes_first() {
        // The first ask answers after 2.5 s; the ones beside it never do.
        let mut asks = 0;
        let made = placed("reading", || {
            asks += 1;
            let first = asks == 1;
            async move {
                if first {
                    tokio::time::sleep(Duration::from_millis(2500)).await;
                    return Ok::<_, std::io::Error>(1);
                }
                std::future::pending().await
            }
        })
        .await;
        assert_eq!(made, Ok(1));
    }

    #[tokio::test(start_paused = true)]
    async fn never_answered_it_gives_up_within_its_bound_saying_what_and_why() {
        let began = tokio::time::Instant::now();
        let never = placed("watching the state bucket", || {
            std::future::pending::<std::io::Result<()>>()
        })
        .await;
        let e = never.unwrap_err();
        assert!(e.retryable());
        assert_eq!(
            e,
            BusError::Unanswered {
                what: "watching the state bucket".into(),
                why: "no answer within 5s".into(),
                tries: ASKS
            }
        );
        let bound = BESIDE_AFTER * (ASKS as u32 - 1) + EACH;
        assert_eq!(began.elapsed(), bound);
    }

    #[tokio::test(start_paused = true)]
    async fn a_refusal_is_asked_again_soon_a_few_times_and_its_words_kept() {
        // Refused at once each time (too few nodes for the replicas asked): said within ~2 s.
        let mut at = Vec::new();
        let began = tokio::time::Instant::now();
        let refused = placed("asking for it", || {
            at.push(began.elapsed());
            async { Err::<(), _>("insufficient resources") }
        })
        .await;
        assert_eq!(at.len(), REFUSALS);
        assert!(at.windows(2).all(|w| w[1] - w[0] == AFTER_NO), "{at:?}");
        assert_eq!(
            refused.unwrap_err().to_string(),
            format!("asking for it: insufficient resources ({REFUSALS} tries)")
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_refusal_then_a_yes_is_made() {
        let mut asks = 0;
        let made = placed("opening bucket fleet", || {
            asks += 1;
            let n = asks;
            async move {
                match n {
                    1..=3 => Err("no leader"),
                    _ => Ok(n),
                }
            }
        })
        .await;
        assert_eq!(made, Ok(4));
    }
}
