//! Where a command keeps and finds proposals: files beside the journal ([`Store`]), or — when
//! the fleet is read from collectors (`--nats`) — the bus, where a teammate reading the same
//! fleet sees and decides them too ([`crate::bus::proposals`]). The same rules either way: an id
//! is new, a decision is taken once and never on an expired proposal.

use jiff::Timestamp;

use super::proposal::{Decision, Proposal, ProposalStatus, TargetOutcome, is_id};
use super::store::{Store, StoreError};
use crate::bus::proposals::{ProposalsBucket, Written};

/// A decision or outcomes written again this many times when someone wrote between the read
/// and the write, at most.
const ATTEMPTS: usize = 5;

/// Where proposals are kept.
#[derive(Clone)]
pub enum Keeper {
    Files(Store),
    Bus(Box<ProposalsBucket>),
}

impl Keeper {
    /// On the bus when the fleet is read from it, else beside the journal.
    pub async fn of(nats: Option<&crate::bus::Options>) -> Result<Keeper, StoreError> {
        match nats {
            Some(options) => Ok(Keeper::Bus(Box::new(
                crate::bus::proposals::open(options).await?,
            ))),
            None => Ok(Keeper::Files(Store::default_place()?)),
        }
    }

    /// Where, in words: `proposals/ beside the journal`, `bucket fluxfleet-proposals`.
    pub fn place(&self) -> String {
        match self {
            Keeper::Files(store) => store.dir().display().to_string(),
            Keeper::Bus(bucket) => format!("bucket {} on the bus", bucket.name),
        }
    }

    pub async fn create(&self, proposal: &Proposal) -> Result<(), StoreError> {
        match self {
            Keeper::Files(store) => store.create(proposal),
            Keeper::Bus(bucket) => {
                let bytes = serde_json::to_vec(proposal).unwrap_or_default();
                match bucket.create(&proposal.id, bytes).await? {
                    true => Ok(()),
                    false => Err(StoreError::Exists(proposal.id.clone())),
                }
            }
        }
    }

    pub async fn load(&self, id: &str) -> Result<Proposal, StoreError> {
        match self {
            Keeper::Files(store) => store.load(id),
            Keeper::Bus(bucket) => read(bucket, id).await.map(|(p, _)| p),
        }
    }

    /// Every proposal, the newest first, and those that could not be read as one.
    pub async fn list(&self) -> Result<(Vec<Proposal>, Vec<StoreError>), StoreError> {
        let bucket = match self {
            Keeper::Files(store) => return store.list(),
            Keeper::Bus(bucket) => bucket,
        };
        let (mut found, mut problems) = (Vec::new(), Vec::new());
        for value in bucket.all().await? {
            match serde_json::from_slice::<Proposal>(&value) {
                Ok(p) => found.push(p),
                Err(why) => problems.push(StoreError::MalformedOnBus(why)),
            }
        }
        found.sort_by(|a, b| b.created.cmp(&a.created).then(a.id.cmp(&b.id)));
        Ok((found, problems))
    }

    /// Records `decision` on a pending proposal if nobody decided it first; the proposal as
    /// decided.
    pub async fn decide(
        &self,
        id: &str,
        decision: Decision,
        now: Timestamp,
    ) -> Result<Proposal, StoreError> {
        let bucket = match self {
            Keeper::Files(store) => return store.decide(id, decision, now),
            Keeper::Bus(bucket) => bucket,
        };
        let (mut proposal, revision) = read(bucket, id).await?;
        super::store::undecided(&proposal, now)?;
        proposal.decision = Some(decision);
        let bytes = serde_json::to_vec(&proposal).unwrap_or_default();
        match bucket.update(id, bytes, revision).await? {
            Written::Done => Ok(proposal),
            // Decided by someone else a moment ago.
            Written::Moved => {
                let status = read(bucket, id)
                    .await
                    .map_or(ProposalStatus::Approved, |(p, _)| p.status(now));
                Err(StoreError::Decided {
                    id: id.to_string(),
                    status,
                })
            }
        }
    }

    /// Records how each target of an approved proposal ended.
    pub async fn record_outcomes(
        &self,
        id: &str,
        outcomes: Vec<TargetOutcome>,
    ) -> Result<(), StoreError> {
        let bucket = match self {
            Keeper::Files(store) => return store.record_outcomes(id, outcomes),
            Keeper::Bus(bucket) => bucket,
        };
        for _ in 0..ATTEMPTS {
            let (mut proposal, revision) = read(bucket, id).await?;
            proposal.outcomes = Some(outcomes.clone());
            let bytes = serde_json::to_vec(&proposal).unwrap_or_default();
            if bucket.update(id, bytes, revision).await? == Written::Done {
                return Ok(());
            }
        }
        Err(StoreError::Busy(id.to_string()))
    }
}

/// A proposal on the bus and the revision it was read at.
async fn read(bucket: &ProposalsBucket, id: &str) -> Result<(Proposal, u64), StoreError> {
    if !is_id(id) {
        return Err(StoreError::BadId(id.to_string()));
    }
    let Some((value, revision)) = bucket.get(id).await? else {
        return Err(StoreError::NotFound(id.to_string()));
    };
    let proposal: Proposal = serde_json::from_slice(&value).map_err(StoreError::MalformedOnBus)?;
    if proposal.id != id {
        return Err(StoreError::NotFound(id.to_string()));
    }
    Ok((proposal, revision))
}
