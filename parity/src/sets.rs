//! Redundancy sets: which logical ranks protect each other.
//!
//! A set holds at most one member per failure group (by default the host),
//! so that one failure never takes two members of a set. With `N` ranks and
//! a wanted set size `s` there are `max(ceil(N / s), largest group)` sets,
//! filled round-robin from the ranks listed group by group: consecutive
//! members of one group land in different sets, and the sizes differ by at
//! most one. So a set size that does not divide `N` gives a few smaller
//! sets (never a leftover set of one), and a job crowded onto few failure
//! groups gives more, smaller sets; a set too small for the scheme is an
//! error that says why.

use crate::scheme::{Scheme, SchemeError};

/// Sets could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetError {
    /// No ranks, or a set size of 0.
    #[error("cannot build redundancy sets: {0}")]
    Input(String),
    /// A resulting set is too small for the scheme (too few failure groups).
    #[error("redundancy set {set} (logical ranks {ranks:?}): {source}")]
    TooSmall {
        /// Index of the set.
        set: usize,
        /// Its members' logical ranks.
        ranks: Vec<u32>,
        /// Why the scheme refuses it.
        source: SchemeError,
    },
}

/// Builds the sets for `groups[i]`, the failure group of logical rank `i`.
/// Each set lists logical ranks, ascending; the order of sets is by their
/// smallest rank. For SINGLE every rank is its own set.
pub fn build_sets(
    groups: &[String],
    set_size: usize,
    scheme: Scheme,
) -> Result<Vec<Vec<u32>>, SetError> {
    let n = groups.len();
    if n == 0 {
        return Err(SetError::Input("no ranks".into()));
    }
    let size = if scheme == Scheme::Single {
        1
    } else {
        set_size
    };
    if size == 0 {
        return Err(SetError::Input("set size 0".into()));
    }
    // Ranks listed group by group, groups in order of first appearance.
    let mut order: Vec<&String> = Vec::new();
    for g in groups {
        if !order.contains(&g) {
            order.push(g);
        }
    }
    let listed: Vec<u32> = order
        .iter()
        .flat_map(|g| (0..n as u32).filter(move |&r| &groups[r as usize] == *g))
        .collect();
    let largest = order
        .iter()
        .map(|g| groups.iter().filter(|x| x == g).count())
        .max()
        .unwrap_or(1);
    let count = n.div_ceil(size).max(largest);
    let mut sets = vec![Vec::new(); count];
    for (t, &r) in listed.iter().enumerate() {
        sets[t % count].push(r);
    }
    for s in &mut sets {
        s.sort_unstable();
    }
    sets.sort_by_key(|s| s[0]);
    for (i, s) in sets.iter().enumerate() {
        scheme
            .validate(s.len())
            .map_err(|source| SetError::TooSmall {
                set: i,
                ranks: s.clone(),
                source,
            })?;
    }
    Ok(sets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(spec: &[(&str, usize)]) -> Vec<String> {
        spec.iter()
            .flat_map(|(h, n)| std::iter::repeat_n(h.to_string(), *n))
            .collect()
    }

    fn check_distinct_groups(groups: &[String], sets: &[Vec<u32>]) {
        let mut seen = vec![false; groups.len()];
        for s in sets {
            for (a, &x) in s.iter().enumerate() {
                assert!(!seen[x as usize], "rank {x} in two sets");
                seen[x as usize] = true;
                for &y in &s[a + 1..] {
                    assert_ne!(groups[x as usize], groups[y as usize], "{s:?}");
                }
            }
        }
        assert!(seen.iter().all(|&b| b), "every rank in a set");
    }

    #[test]
    fn one_rank_per_host_gives_sets_of_the_wanted_size() {
        let g: Vec<String> = (0..8).map(|i| format!("h{i}")).collect();
        let sets = build_sets(&g, 4, Scheme::Xor).unwrap();
        assert_eq!(sets.len(), 2);
        assert!(sets.iter().all(|s| s.len() == 4));
        check_distinct_groups(&g, &sets);
    }

    #[test]
    fn two_hosts_of_four_ranks_pair_across_hosts() {
        let g = hosts(&[("a", 4), ("b", 4)]);
        let sets = build_sets(&g, 2, Scheme::Xor).unwrap();
        assert_eq!(sets, vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]);
    }

    #[test]
    fn remainder_ranks_make_balanced_sets_not_a_set_of_one() {
        let g: Vec<String> = (0..9).map(|i| format!("h{i}")).collect();
        let sets = build_sets(&g, 4, Scheme::Xor).unwrap();
        let sizes: Vec<usize> = sets.iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![3, 3, 3]);
        check_distinct_groups(&g, &sets);
        let g: Vec<String> = (0..7).map(|i| format!("h{i}")).collect();
        let sets = build_sets(&g, 4, Scheme::Rs { k: 2 }).unwrap();
        let mut sizes: Vec<usize> = sets.iter().map(Vec::len).collect();
        sizes.sort();
        assert_eq!(sizes, vec![3, 4]);
    }

    #[test]
    fn crowded_host_gives_more_sets_and_a_clear_error_when_too_small() {
        let g = hosts(&[("a", 2), ("b", 1), ("c", 1)]);
        let sets = build_sets(&g, 4, Scheme::Xor).unwrap();
        check_distinct_groups(&g, &sets);
        assert_eq!(sets.len(), 2);
        // Three ranks on host a need three sets, and only two others can
        // join them: the third set would be unprotected.
        let g = hosts(&[("a", 3), ("b", 1), ("c", 1)]);
        let e = build_sets(&g, 5, Scheme::Xor).unwrap_err();
        assert!(matches!(e, SetError::TooSmall { .. }), "{e}");
        let g = hosts(&[("a", 4)]);
        let e = build_sets(&g, 4, Scheme::Xor).unwrap_err();
        assert!(e.to_string().contains("distinct failure groups"), "{e}");
    }

    #[test]
    fn single_sets_are_single_ranks() {
        let g = hosts(&[("a", 3)]);
        assert_eq!(
            build_sets(&g, 8, Scheme::Single).unwrap(),
            vec![vec![0], vec![1], vec![2]]
        );
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(build_sets(&[], 2, Scheme::Xor).is_err());
        assert!(build_sets(&hosts(&[("a", 1)]), 0, Scheme::Xor).is_err());
    }
}
