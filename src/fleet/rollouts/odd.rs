//! The odd one out: a copy on the same revision as the other copies of its ring, deployed with
//! other values or applying another number of objects — drift between clusters.

use super::spread::{Odd, Place};
use std::collections::HashMap;

/// Marks the copies whose values or inventory differ from most of the copies of their ring on
/// the same revision (at least two peers agreeing). `inventory` is each place's object count.
pub(super) fn mark(places: &mut [Place], inventory: &[Option<u32>]) {
    let mut peers: HashMap<(usize, &str), Vec<usize>> = HashMap::new();
    for (i, p) in places.iter().enumerate() {
        if let Some(r) = &p.revision {
            peers.entry((p.ring, &r.revision)).or_default().push(i);
        }
    }
    let mut odd: Vec<(usize, Odd)> = Vec::new();
    for group in peers.values().filter(|g| g.len() >= 3) {
        let digests = group.iter().map(|i| {
            let r = places[*i].revision.as_ref();
            r.and_then(|r| r.config_digest.clone())
        });
        if let Some((common, of)) = most(digests.clone().flatten()) {
            for (i, mine) in group.iter().zip(digests) {
                if let Some(mine) = mine.filter(|m| *m != common) {
                    let peers = common.clone();
                    odd.push((*i, Odd::Values { mine, peers, of }));
                }
            }
        }
        let counts = group.iter().map(|i| inventory[*i]);
        if let Some((common, of)) = most(counts.clone().flatten()) {
            for (i, mine) in group.iter().zip(counts) {
                if let Some(mine) = mine.filter(|m| *m != common) {
                    odd.push((
                        *i,
                        Odd::Inventory {
                            mine,
                            peers: common,
                            of,
                        },
                    ));
                }
            }
        }
    }
    for (i, o) in odd {
        places[i].odd.get_or_insert(o);
    }
}

/// The most common value and how many have it, when at least two agree.
fn most<T: PartialEq + Clone>(values: impl Iterator<Item = T>) -> Option<(T, usize)> {
    let mut counts: Vec<(T, usize)> = Vec::new();
    for v in values {
        match counts.iter_mut().find(|(c, _)| *c == v) {
            Some((_, n)) => *n += 1,
            None => counts.push((v, 1)),
        }
    }
    counts
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .filter(|(_, n)| *n >= 2)
}
