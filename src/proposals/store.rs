//! Proposals kept as files in `proposals/` beside the journal: `<id>.json`, owner-only, replaced
//! whole when it changes. A decision is claimed by creating `<id>.decided` — of two people
//! approving at once, exactly one gets it, so a proposal acts at most once.

use std::path::{Path, PathBuf};

use jiff::Timestamp;

use super::proposal::{Decision, Proposal, ProposalStatus, TargetOutcome, is_id};

/// A proposal's file, at most: its targets are at most `actions.max_targets`.
const MAX_FILE: u64 = 64 * 1024 * 1024;

/// Why a proposal could not be kept, found or decided.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no data directory to keep proposals in (set FLUXFLEET_DATA_DIR)")]
    NoDirectory,
    #[error(
        "{0:?} is not a proposal's id (p- and hex digits, as `fluxfleet proposals` lists them)"
    )]
    BadId(String),
    #[error("no proposal {0}")]
    NotFound(String),
    #[error("proposal {id} is {status} already: it can no longer be decided")]
    Decided { id: String, status: ProposalStatus },
    #[error("proposal {0} has expired: nothing can act on it (ask for it again)")]
    Expired(String),
    #[error("cannot read {}: {why}", path.display())]
    Read { path: PathBuf, why: std::io::Error },
    #[error("{} is not a proposal: {why}", path.display())]
    Malformed {
        path: PathBuf,
        why: serde_json::Error,
    },
    #[error("{} holds another proposal than its name says", path.display())]
    Misnamed { path: PathBuf },
    #[error("{} is larger than a proposal can be ({MAX_FILE} bytes)", path.display())]
    TooLarge { path: PathBuf },
    #[error("cannot write {}: {why}", path.display())]
    Write { path: PathBuf, why: std::io::Error },
    #[error("a proposal {0} exists already")]
    Exists(String),
    #[error("a proposal on the bus is not one: {0}")]
    MalformedOnBus(serde_json::Error),
    #[error("proposal {0} kept changing while its outcomes were written: they were not")]
    Busy(String),
    #[error(transparent)]
    Bus(#[from] crate::bus::BusError),
}

/// The proposals of one data directory.
#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// `proposals/` beside the journal (`FLUXFLEET_DATA_DIR`, else the platform's data directory).
    pub fn default_place() -> Result<Store, StoreError> {
        crate::places::proposals()
            .map(Store::at)
            .ok_or(StoreError::NoDirectory)
    }

    pub fn at(dir: PathBuf) -> Store {
        Store { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn file(&self, id: &str) -> Result<PathBuf, StoreError> {
        if !is_id(id) {
            return Err(StoreError::BadId(id.to_string()));
        }
        Ok(self.dir.join(format!("{id}.json")))
    }

    /// Keeps a new proposal; its id must be new.
    pub fn create(&self, proposal: &Proposal) -> Result<(), StoreError> {
        use std::io::Write;
        let path = self.file(&proposal.id)?;
        let bytes = serde_json::to_vec_pretty(proposal).unwrap_or_default();
        let written = crate::private::create_new(&path).and_then(|mut f| {
            f.write_all(&bytes)?;
            f.sync_all()
        });
        written.map_err(|why| StoreError::Write { path, why })
    }

    pub fn load(&self, id: &str) -> Result<Proposal, StoreError> {
        let path = self.file(id)?;
        match read(&path) {
            Err(StoreError::Read { why, .. }) if why.kind() == std::io::ErrorKind::NotFound => {
                Err(StoreError::NotFound(id.to_string()))
            }
            other => other,
        }
    }

    /// Every proposal, the newest first, and the files that could not be read as one.
    pub fn list(&self) -> Result<(Vec<Proposal>, Vec<StoreError>), StoreError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(why) if why.kind() == std::io::ErrorKind::NotFound => {
                return Ok((Vec::new(), Vec::new()));
            }
            Err(why) => {
                return Err(StoreError::Read {
                    path: self.dir.clone(),
                    why,
                });
            }
        };
        let (mut found, mut problems) = (Vec::new(), Vec::new());
        for entry in entries.flatten() {
            let path = entry.path();
            let named = path.file_stem().and_then(|s| s.to_str()).is_some_and(is_id);
            if !named || path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            match read(&path) {
                Ok(proposal) => found.push(proposal),
                Err(e) => problems.push(e),
            }
        }
        found.sort_by(|a: &Proposal, b| b.created.cmp(&a.created).then(a.id.cmp(&b.id)));
        Ok((found, problems))
    }

    /// Records `decision` on a pending proposal, if nobody decided it first; the proposal as
    /// decided. An expired proposal cannot be decided.
    pub fn decide(
        &self,
        id: &str,
        decision: Decision,
        now: Timestamp,
    ) -> Result<Proposal, StoreError> {
        let mut proposal = self.load(id)?;
        undecided(&proposal, now)?;
        let claim = self.dir.join(format!("{id}.decided"));
        if let Err(why) = crate::private::create_new(&claim) {
            if why.kind() == std::io::ErrorKind::AlreadyExists {
                // Decided by someone else a moment ago.
                let status = self
                    .load(id)
                    .map_or(ProposalStatus::Approved, |p| p.status(now));
                return Err(StoreError::Decided {
                    id: id.to_string(),
                    status,
                });
            }
            return Err(StoreError::Write { path: claim, why });
        }
        proposal.decision = Some(decision);
        self.replace(&proposal)?;
        Ok(proposal)
    }

    /// Records how each target of an approved proposal ended.
    pub fn record_outcomes(
        &self,
        id: &str,
        outcomes: Vec<TargetOutcome>,
    ) -> Result<(), StoreError> {
        let mut proposal = self.load(id)?;
        proposal.outcomes = Some(outcomes);
        self.replace(&proposal)
    }

    fn replace(&self, proposal: &Proposal) -> Result<(), StoreError> {
        let path = self.file(&proposal.id)?;
        let bytes = serde_json::to_vec_pretty(proposal).unwrap_or_default();
        crate::private::replace(&path, &bytes).map_err(|why| StoreError::Write { path, why })
    }
}

/// Refuses a decision on a proposal decided already, or expired.
pub(super) fn undecided(proposal: &Proposal, now: Timestamp) -> Result<(), StoreError> {
    match proposal.status(now) {
        ProposalStatus::Pending => Ok(()),
        ProposalStatus::Expired => Err(StoreError::Expired(proposal.id.clone())),
        status => Err(StoreError::Decided {
            id: proposal.id.clone(),
            status,
        }),
    }
}

fn read(path: &Path) -> Result<Proposal, StoreError> {
    use std::io::Read;
    let failed = |why| StoreError::Read {
        path: path.to_path_buf(),
        why,
    };
    let file = std::fs::File::open(path).map_err(failed)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(failed)?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(StoreError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    let proposal: Proposal =
        serde_json::from_slice(&bytes).map_err(|why| StoreError::Malformed {
            path: path.to_path_buf(),
            why,
        })?;
    if path.file_stem().and_then(|s| s.to_str()) != Some(proposal.id.as_str()) {
        return Err(StoreError::Misnamed {
            path: path.to_path_buf(),
        });
    }
    Ok(proposal)
}
