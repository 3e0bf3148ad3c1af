//! The PARTNER scheme's placement: member `m` of a set of `p` sends its
//! logical file to the next `c` members (`m+1 … m+c mod p`), and stores the
//! copies of the previous `c` (`m-1 … m-c`), nearest first, as redset does.
//! Sets hold at most one member per failure group, so every copy lands in
//! another failure group; any `c` lost members leave a copy of each.

/// The members whose copies member `m` stores, nearest first.
pub fn stored_by(m: usize, p: usize, copies: usize) -> Vec<usize> {
    (1..=copies).map(|t| (m + p - t) % p).collect()
}

/// The members that store a copy of member `m`'s files.
pub fn holders_of(m: usize, p: usize, copies: usize) -> Vec<usize> {
    (1..=copies).map(|t| (m + t) % p).collect()
}

/// Which slot of member `holder`'s redundancy file holds member `m`'s copy.
pub fn slot_of(m: usize, holder: usize, p: usize, copies: usize) -> Option<usize> {
    stored_by(holder, p, copies).iter().position(|&x| x == m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_member_is_copied_exactly_c_times_elsewhere() {
        for p in 2..7 {
            for c in 1..p {
                for m in 0..p {
                    let h = holders_of(m, p, c);
                    assert_eq!(h.len(), c);
                    assert!(!h.contains(&m));
                    for &x in &h {
                        assert!(stored_by(x, p, c).contains(&m));
                        assert!(slot_of(m, x, p, c).is_some());
                    }
                }
            }
        }
    }
}
