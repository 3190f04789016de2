//! Proposals on the bus: `<bucket>-proposals`, a KV bucket holding each proposal's JSON under its
//! id, for a team whose fleet is read from collectors — whoever reads the same bus sees and
//! decides the same proposals, wherever the assistant's server runs. A decision is written at
//! the revision it was read at: of two people deciding at once, one is taken. Proposals are kept
//! [`KEPT`].

use std::time::Duration;

use async_nats::jetstream;
use bytes::Bytes;

use super::{BusError, Names, Options};

/// How long a proposal stays on the bus, decided or not.
pub const KEPT: Duration = Duration::from_secs(30 * 24 * 3600);

/// The proposals bucket of one fleet.
#[derive(Clone)]
pub struct ProposalsBucket {
    kv: jetstream::kv::Store,
    pub name: String,
}

/// What a write at a revision came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Written {
    Done,
    /// Someone wrote it since it was read: read it again.
    Moved,
}

/// Opens the bucket, made with as many copies as the fleet's state bucket when it is missing.
pub async fn open(options: &Options) -> Result<ProposalsBucket, BusError> {
    let names = Names::of(&options.bucket)?;
    let client = super::connect(options, "fluxfleet proposals").await?;
    let js = jetstream::new(client);
    let name = format!("{}-proposals", names.state);
    let replicas = match js.get_stream(format!("KV_{}", names.state)).await {
        Ok(mut state) => state
            .info()
            .await
            .map_or(1, |info| info.config.num_replicas),
        Err(_) => 1,
    };
    let about = "fluxfleet: actions assistants proposed, and what people decided";
    let kv = super::bucket(&js, (&name, about), KEPT, replicas).await?;
    Ok(ProposalsBucket { kv, name })
}

impl ProposalsBucket {
    /// Keeps a new proposal; false when one has that id already.
    pub async fn create(&self, id: &str, value: Vec<u8>) -> Result<bool, BusError> {
        use jetstream::kv::CreateErrorKind;
        match self.kv.create(id, Bytes::from(value)).await {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == CreateErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(BusError::jetstream(format!("keeping proposal {id}"), e)),
        }
    }

    /// A proposal's JSON and the revision it was read at.
    pub async fn get(&self, id: &str) -> Result<Option<(Bytes, u64)>, BusError> {
        let entry = self
            .kv
            .entry(id)
            .await
            .map_err(|e| BusError::jetstream(format!("reading proposal {id}"), e))?;
        Ok(entry
            .filter(|e| e.operation == jetstream::kv::Operation::Put)
            .map(|e| (e.value, e.revision)))
    }

    /// Replaces a proposal read at `revision`, unless it was written since.
    pub async fn update(
        &self,
        id: &str,
        value: Vec<u8>,
        revision: u64,
    ) -> Result<Written, BusError> {
        use jetstream::kv::UpdateErrorKind;
        match self.kv.update(id, Bytes::from(value), revision).await {
            Ok(_) => Ok(Written::Done),
            Err(e) if e.kind() == UpdateErrorKind::WrongLastRevision => Ok(Written::Moved),
            Err(e) => Err(BusError::jetstream(format!("writing proposal {id}"), e)),
        }
    }

    /// Every proposal's JSON.
    pub async fn all(&self) -> Result<Vec<Bytes>, BusError> {
        use futures::TryStreamExt;
        let mut keys = self
            .kv
            .keys()
            .await
            .map_err(|e| BusError::jetstream("listing proposals", e))?;
        let mut values = Vec::new();
        while let Some(key) = keys
            .try_next()
            .await
            .map_err(|e| BusError::jetstream("listing proposals", e))?
        {
            if let Some((value, _)) = self.get(&key).await? {
                values.push(value);
            }
        }
        Ok(values)
    }
}
