//! A root cause's blast radius across its copies: how much each copy holds back.

use crate::fleet::SharedText;
use std::borrow::Borrow;
use std::collections::BTreeSet;

use serde::Serialize;

use crate::fleet::ObjectKey;

/// What a root cause holds back on the clusters it is on (its copies): the blast radius that
/// triage and `get --root-causes` show.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Holds {
    /// The fewest and the most one copy holds back.
    pub fewest: usize,
    pub most: usize,
    /// On all its clusters together.
    pub total: usize,
    /// The names of what it holds back, each once.
    pub names: BTreeSet<SharedText>,
    #[serde(skip)]
    copies: usize,
}

impl Holds {
    /// Another group's copies, as if added one by one.
    pub fn merge(&mut self, other: &Holds) {
        if other.copies == 0 {
            return;
        }
        self.fewest = match self.copies {
            0 => other.fewest,
            _ => self.fewest.min(other.fewest),
        };
        self.copies += other.copies;
        self.most = self.most.max(other.most);
        self.total += other.total;
        self.names.extend(other.names.iter().cloned());
    }

    /// One more copy, holding `held` back on its cluster.
    pub fn add<K: Borrow<ObjectKey>>(&mut self, held: &[K]) {
        let n = held.len();
        self.fewest = if self.copies == 0 {
            n
        } else {
            self.fewest.min(n)
        };
        self.copies += 1;
        self.most = self.most.max(n);
        self.total += n;
        for k in held.iter().map(Borrow::borrow) {
            if !self.names.contains(&k.name) {
                self.names.insert(k.name.clone());
            }
        }
    }

    /// "3" (one copy), "4 each", "2–4 each"; empty when it holds nothing back.
    pub fn text(&self) -> String {
        match (self.most, self.copies) {
            (0, _) => String::new(),
            (n, 1) => n.to_string(),
            (n, _) if n == self.fewest => format!("{n} each"),
            (n, _) => format!("{}–{n} each", self.fewest),
        }
    }
}
