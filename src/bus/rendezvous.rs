//! Which collector watches a cluster: the live one that ranks highest for it (rendezvous
//! hashing), so that when one dies only its clusters move, and they come back when it returns.

use std::collections::BTreeSet;

use super::wire;

/// The live collector that ranks highest for `cluster`.
pub fn owner<'a>(cluster: &str, collectors: &'a BTreeSet<String>) -> Option<&'a str> {
    let of = mix(wire::hash(cluster.as_bytes()));
    collectors
        .iter()
        .max_by_key(|c| mix(wire::hash(c.as_bytes()) ^ of))
        .map(String::as_str)
}

/// splitmix64's finalizer: every bit of the input moves every bit of the output, so that the
/// highest score is as likely for any collector (FNV alone favours some of similar names).
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn each_cluster_has_one_owner_and_only_a_dead_ones_clusters_move() {
        let three: BTreeSet<String> = ["c1", "b", "c3"].iter().map(|s| s.to_string()).collect();
        let two: BTreeSet<String> = ["c1", "c3"].iter().map(|s| s.to_string()).collect();
        let mut per = HashMap::new();
        for i in 0..3000 {
            let cluster = format!("cluster-{i:04}");
            let before = owner(&cluster, &three);
            *per.entry(before).or_insert(0) += 1;
            let after = owner(&cluster, &two);
            if before != Some("b") {
                assert_eq!(before, after, "{cluster} moved though its collector lives");
            }
        }
        // Roughly a third each, also for names that differ in one letter.
        for n in per.values() {
            assert!((880..1120).contains(n), "{per:?}");
        }
        let similar: BTreeSet<String> = (1..=3).map(|i| format!("c{i}")).collect();
        let mut per = HashMap::new();
        for i in 0..3000 {
            *per.entry(owner(&format!("cluster-{i:04}"), &similar))
                .or_insert(0) += 1;
        }
        for n in per.values() {
            assert!((880..1120).contains(n), "{per:?}");
        }
        assert_eq!(owner("x", &BTreeSet::new()), None);
    }
}
