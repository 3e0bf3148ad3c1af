//! Replica topology: which replica and which logical rank each world rank is.
//!
//! A job of `N·r` processes runs `r` replicas of an `N`-rank application.
//! The mapping from a world rank `w` to a [`Placement`] is chosen by a
//! [`Layout`]:
//!
//! - block: `w → (replica w / N, rank w % N)`: replicas are contiguous;
//! - cyclic: `w → (replica w % r, rank w / r)`: the replicas of one logical
//!   rank are neighbours (what `mpiexec` places on the same node);
//! - an explicit map, read from a map file (see [`Topology::from_map_text`]).
//!
//! Everything here is pure and checked: an impossible topology is an error
//! with a message a user can act on, never a panic.

use std::fmt;

/// Smallest and largest supported degree of redundancy.
pub const DEGREE_RANGE: std::ops::RangeInclusive<u32> = 1..=3;

/// Where one world rank sits in the replicated job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Placement {
    /// Replica index, `0..degree`.
    pub replica: u32,
    /// Logical rank inside the replica's world, `0..ranks`.
    pub rank: u32,
}

/// How world ranks are assigned to replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutKind {
    /// Replica `w / N`, rank `w % N`.
    Block,
    /// Replica `w % r`, rank `w / r`.
    Cyclic,
    /// Read from a map file.
    Map,
}

impl From<crate::config::Layout> for LayoutKind {
    fn from(layout: crate::config::Layout) -> Self {
        match layout {
            crate::config::Layout::Block => LayoutKind::Block,
            crate::config::Layout::Cyclic => LayoutKind::Cyclic,
            crate::config::Layout::Map => LayoutKind::Map,
        }
    }
}

impl fmt::Display for LayoutKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LayoutKind::Block => "block",
            LayoutKind::Cyclic => "cyclic",
            LayoutKind::Map => "map",
        })
    }
}

/// Why a topology cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopologyError {
    /// The degree is outside [`DEGREE_RANGE`].
    Degree(u32),
    /// The world size is not a positive multiple of the degree.
    NotDivisible {
        /// Number of processes in `MPI_COMM_WORLD`.
        world_size: u32,
        /// Requested degree of redundancy.
        degree: u32,
    },
    /// A map file line could not be understood or broke an invariant.
    Map {
        /// 1-based line in the map file (0 when the problem is global).
        line: usize,
        /// What was wrong.
        message: String,
    },
}

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopologyError::Degree(d) => write!(
                f,
                "degree of redundancy {d} is not supported (allowed: {} to {})",
                DEGREE_RANGE.start(),
                DEGREE_RANGE.end()
            ),
            TopologyError::NotDivisible { world_size, degree } => write!(
                f,
                "{world_size} processes cannot form {degree} replicas: the number of \
                 processes must be a multiple of the degree (e.g. {} or {})",
                (world_size / degree).max(1) * degree,
                (world_size / degree + 1) * degree
            ),
            TopologyError::Map { line: 0, message } => write!(f, "map file: {message}"),
            TopologyError::Map { line, message } => write!(f, "map file line {line}: {message}"),
        }
    }
}

impl std::error::Error for TopologyError {}

/// The replica mapping of one job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    degree: u32,
    ranks: u32,
    kind: LayoutKind,
    /// Placement of every world rank, indexed by world rank.
    placements: Vec<Placement>,
}

/// The largest map file read (64 MiB: a line per world rank).
pub const MAX_MAP_LEN: u64 = 64 << 20;

impl Topology {
    /// The topology of `layout` for `world_size` processes at `degree`;
    /// `map_text` is the map file's text (read only for
    /// [`LayoutKind::Map`]). The one dispatch from the configuration's
    /// layout, for the CLI and the preload alike.
    pub fn of_layout(
        layout: LayoutKind,
        world_size: u32,
        degree: u32,
        map_text: &str,
    ) -> Result<Self, TopologyError> {
        match layout {
            LayoutKind::Map => Topology::from_map_text(map_text, world_size, degree),
            kind => Topology::regular(world_size, degree, kind),
        }
    }

    /// Builds a block or cyclic topology for `world_size` processes.
    ///
    /// `kind` must not be [`LayoutKind::Map`]: use [`Topology::from_map_text`].
    pub fn regular(world_size: u32, degree: u32, kind: LayoutKind) -> Result<Self, TopologyError> {
        let ranks = check_shape(world_size, degree)?;
        let placements = (0..world_size)
            .map(|w| match kind {
                LayoutKind::Cyclic => Placement {
                    replica: w % degree,
                    rank: w / degree,
                },
                LayoutKind::Block | LayoutKind::Map => Placement {
                    replica: w / ranks,
                    rank: w % ranks,
                },
            })
            .collect();
        Ok(Topology {
            degree,
            ranks,
            kind,
            placements,
        })
    }

    /// Reads a map file: a regular file of at most [`MAX_MAP_LEN`] bytes of
    /// UTF-8 text (a FIFO or device named as the map is refused at once).
    pub fn read_map_file(path: &std::path::Path) -> Result<String, String> {
        let bytes = redio_parity::safe_fs::read_bounded(
            path,
            redio_parity::safe_fs::Links::Follow,
            MAX_MAP_LEN,
            "replica map file",
        )
        .map_err(|e| format!("cannot read replica map file {}: {e}", path.display()))?;
        String::from_utf8(bytes).map_err(|e| {
            format!(
                "replica map file {}: not UTF-8 text (bad byte at offset {})",
                path.display(),
                e.utf8_error().valid_up_to()
            )
        })
    }

    /// Builds a topology from the text of a map file.
    ///
    /// Format: one line per world rank, `WORLD_RANK REPLICA RANK`, separated
    /// by white space; `#` starts a comment; blank lines are ignored. Every
    /// world rank appears exactly once and every `(replica, rank)` pair of the
    /// `degree × world_size/degree` grid exactly once.
    pub fn from_map_text(text: &str, world_size: u32, degree: u32) -> Result<Self, TopologyError> {
        let ranks = check_shape(world_size, degree)?;
        let mut placements: Vec<Option<Placement>> = vec![None; world_size as usize];
        let mut taken = vec![false; world_size as usize];
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let err = |message: String| TopologyError::Map { line, message };
            let fields: Vec<&str> = content.split_whitespace().collect();
            if fields.len() != 3 {
                return Err(err(format!(
                    "expected `WORLD_RANK REPLICA RANK`, found {content:?}"
                )));
            }
            let mut numbers = [0u32; 3];
            for (slot, field) in numbers.iter_mut().zip(&fields) {
                *slot = field
                    .parse()
                    .map_err(|_| err(format!("{field:?} is not a non-negative integer")))?;
            }
            let [world, replica, rank] = numbers;
            if world >= world_size {
                return Err(err(format!(
                    "world rank {world} does not exist (the job has {world_size} processes)"
                )));
            }
            if replica >= degree || rank >= ranks {
                return Err(err(format!(
                    "placement (replica {replica}, rank {rank}) is outside the \
                     {degree} replicas x {ranks} ranks of this job"
                )));
            }
            if placements[world as usize].is_some() {
                return Err(err(format!("world rank {world} is mapped twice")));
            }
            let cell = (replica * ranks + rank) as usize;
            if std::mem::replace(&mut taken[cell], true) {
                return Err(err(format!(
                    "(replica {replica}, rank {rank}) is given to two world ranks"
                )));
            }
            placements[world as usize] = Some(Placement { replica, rank });
        }
        let placements = placements
            .into_iter()
            .enumerate()
            .map(|(w, p)| {
                p.ok_or_else(|| TopologyError::Map {
                    line: 0,
                    message: format!("world rank {w} is not mapped"),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Topology {
            degree,
            ranks,
            kind: LayoutKind::Map,
            placements,
        })
    }

    /// Degree of redundancy `r`.
    pub fn degree(&self) -> u32 {
        self.degree
    }

    /// Logical ranks per replica `N`.
    pub fn ranks(&self) -> u32 {
        self.ranks
    }

    /// The layout this topology was built with.
    pub fn kind(&self) -> LayoutKind {
        self.kind
    }

    /// Number of processes in the whole job, `N·r`.
    pub fn world_size(&self) -> u32 {
        self.placements.len() as u32
    }

    /// Placement of world rank `world_rank` (which must be `< world_size`).
    pub fn place(&self, world_rank: u32) -> Placement {
        self.placements[world_rank as usize]
    }

    /// World ranks of the `N` processes of `replica`, in logical-rank order
    /// (so a process's position in the list is its logical rank).
    pub fn replica_members(&self, replica: u32) -> Vec<u32> {
        self.members(|p| p.replica == replica, |p| p.rank)
    }

    /// World ranks of the `r` replicas of logical rank `rank`, in replica
    /// order (so a process's position in the list is its replica index).
    pub fn replica_set_members(&self, rank: u32) -> Vec<u32> {
        self.members(|p| p.rank == rank, |p| p.replica)
    }

    /// World ranks whose placement passes `keep`, ordered by `position`.
    fn members(
        &self,
        keep: impl Fn(&Placement) -> bool,
        position: impl Fn(&Placement) -> u32,
    ) -> Vec<u32> {
        let mut found: Vec<(u32, u32)> = (0..self.world_size())
            .map(|w| (w, self.place(w)))
            .filter(|(_, p)| keep(p))
            .map(|(w, p)| (position(&p), w))
            .collect();
        found.sort_unstable();
        found.into_iter().map(|(_, w)| w).collect()
    }

    /// World rank that runs `replica` of logical rank `rank`.
    pub fn world_rank_of(&self, placement: Placement) -> Option<u32> {
        self.placements
            .iter()
            .position(|p| *p == placement)
            .map(|w| w as u32)
    }
}

/// Checks degree and divisibility; returns the number of logical ranks.
fn check_shape(world_size: u32, degree: u32) -> Result<u32, TopologyError> {
    if !DEGREE_RANGE.contains(&degree) {
        return Err(TopologyError::Degree(degree));
    }
    if world_size == 0 || world_size % degree != 0 {
        return Err(TopologyError::NotDivisible { world_size, degree });
    }
    Ok(world_size / degree)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(t: &Topology) -> Vec<(u32, u32)> {
        (0..t.world_size())
            .map(|w| {
                let p = t.place(w);
                (p.replica, p.rank)
            })
            .collect()
    }

    #[test]
    fn block_puts_replicas_contiguously() {
        let t = Topology::regular(6, 3, LayoutKind::Block).unwrap();
        assert_eq!(t.ranks(), 2);
        assert_eq!(pairs(&t), [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]);
    }

    #[test]
    fn cyclic_puts_replicas_of_a_rank_together() {
        let t = Topology::regular(6, 3, LayoutKind::Cyclic).unwrap();
        assert_eq!(pairs(&t), [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]);
        assert_eq!(
            t.world_rank_of(Placement {
                replica: 2,
                rank: 1
            }),
            Some(5)
        );
    }

    #[test]
    fn members_are_listed_in_rank_and_replica_order() {
        let cyclic = Topology::regular(6, 3, LayoutKind::Cyclic).unwrap();
        assert_eq!(cyclic.replica_members(1), [1, 4]);
        assert_eq!(cyclic.replica_set_members(1), [3, 4, 5]);
        let map = Topology::from_map_text("0 1 1\n1 0 0\n2 1 0\n3 0 1\n", 4, 2).unwrap();
        assert_eq!(map.replica_members(1), [2, 0]);
        assert_eq!(map.replica_set_members(0), [1, 2]);
    }

    #[test]
    fn degree_one_is_the_identity() {
        let t = Topology::regular(4, 1, LayoutKind::Cyclic).unwrap();
        assert_eq!(pairs(&t), [(0, 0), (0, 1), (0, 2), (0, 3)]);
    }

    #[test]
    fn impossible_shapes_are_refused_with_a_clear_message() {
        for degree in [0, 4] {
            let e = Topology::regular(8, degree, LayoutKind::Block).unwrap_err();
            assert_eq!(e, TopologyError::Degree(degree));
            assert!(e.to_string().contains("allowed: 1 to 3"), "{e}");
        }
        let e = Topology::regular(7, 2, LayoutKind::Block).unwrap_err();
        assert_eq!(
            e.to_string(),
            "7 processes cannot form 2 replicas: the number of processes must be a \
             multiple of the degree (e.g. 6 or 8)"
        );
        assert!(Topology::regular(0, 1, LayoutKind::Block).is_err());
    }

    #[test]
    fn map_file_is_read_and_checked() {
        let text = "# w replica rank\n0 1 0\n1 0 0\n\n2 1 1 # swapped\n3 0 1\n";
        let t = Topology::from_map_text(text, 4, 2).unwrap();
        assert_eq!(pairs(&t), [(1, 0), (0, 0), (1, 1), (0, 1)]);
        assert_eq!(t.kind(), LayoutKind::Map);
    }

    #[test]
    fn map_file_errors_name_the_line() {
        let cases = [
            ("0 0 0\n0 1 0\n", "line 2: world rank 0 is mapped twice"),
            (
                "0 0 0\n1 0 0\n",
                "line 2: (replica 0, rank 0) is given to two",
            ),
            (
                "0 0 0\n1 2 0\n",
                "line 2: placement (replica 2, rank 0) is outside",
            ),
            ("0 0 x\n", "line 1: \"x\" is not a non-negative integer"),
            ("0 0\n", "line 1: expected `WORLD_RANK REPLICA RANK`"),
            ("0 0 0\n9 1 0\n", "line 2: world rank 9 does not exist"),
            ("0 0 0\n", "map file: world rank 1 is not mapped"),
        ];
        for (text, expected) in cases {
            let e = Topology::from_map_text(text, 2, 2).unwrap_err().to_string();
            assert!(e.contains(expected), "{text:?}: got {e:?}");
        }
    }
}
