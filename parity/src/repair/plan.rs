//! The plan every member of the set derives alike from the header and the
//! damage: the steps in their fixed order (the damaged members' data and
//! their lost redundancy files, grouped by row), the walk over their pieces
//! ([`Plan::positions`]: piece by piece across all steps, so that the
//! damaged members rebuild at once), and for each piece which sources
//! answer and what they are asked for (the 17-byte [`Request`]). Being the
//! same everywhere is what lets sources answer without being told the
//! plan, and keeps the waits free of cycles.
//!
//! No step reads what another rebuilds: parity of a row with lost data is
//! computed from the row's survivors (the rebuilder solves the row's lost
//! data on the way), and a PARTNER copy of a lost member comes from the
//! copy that survives. So every step of a row asks the same sources for the
//! same pieces, one step after the other, and each surviving byte is read
//! once.

use super::Damage;
use crate::encode::header_for;
use crate::format::Header;
use crate::partner;
use crate::scheme::Scheme;
use crate::stripe::{RowPlan, StripeCode};

/// What one step rebuilds at its rebuilder.
#[derive(Debug, Clone, Copy)]
pub(super) enum Output {
    /// XOR / RS: the rebuilder's data chunk `chunk`, in row `row`.
    Data { row: usize, chunk: usize },
    /// XOR / RS: the rebuilder's parity chunk `j`.
    Parity { j: usize },
    /// PARTNER: the rebuilder's data, from copy `slot` of `holder`.
    Copy { holder: usize, slot: usize },
    /// PARTNER: copy `slot` of the rebuilder's redundancy file, the data of
    /// `of`: from `of` itself, or when `of` lost its data from the
    /// surviving copy `(holder, slot)` that rebuilds it.
    Hold {
        slot: usize,
        of: usize,
        copy: Option<(usize, usize)>,
    },
}

/// One step: who rebuilds what, over how many bytes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Step {
    pub(super) to: usize,
    pub(super) out: Output,
    pub(super) len: u64,
}

/// A piece a source is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Request {
    /// Bytes of the source's logical file.
    Data { offset: u64, len: u64 },
    /// Bytes of the source's redundancy payload.
    Payload { offset: u64, len: u64 },
}

impl Request {
    pub(super) fn encode(self) -> [u8; 17] {
        let (kind, offset, len) = match self {
            Request::Data { offset, len } => (0u8, offset, len),
            Request::Payload { offset, len } => (1u8, offset, len),
        };
        let mut b = [0u8; 17];
        b[0] = kind;
        b[1..9].copy_from_slice(&offset.to_le_bytes());
        b[9..].copy_from_slice(&len.to_le_bytes());
        b
    }

    pub(super) fn decode(b: &[u8]) -> Result<Self, String> {
        if b.len() != 17 {
            return Err(format!("a rebuild request of {} bytes", b.len()));
        }
        let word =
            |r: std::ops::Range<usize>| u64::from_le_bytes(b[r].try_into().unwrap_or([0; 8]));
        let (offset, len) = (word(1..9), word(9..17));
        match b[0] {
            0 => Ok(Request::Data { offset, len }),
            1 => Ok(Request::Payload { offset, len }),
            k => Err(format!("a rebuild request of unknown kind {k}")),
        }
    }

    pub(super) fn len(self) -> u64 {
        match self {
            Request::Data { len, .. } | Request::Payload { len, .. } => len,
        }
    }
}

/// The plan of a set: the code (XOR / RS), each row's plan, and the steps.
pub(super) struct Plan {
    pub(super) code: Option<StripeCode>,
    pub(super) rows: Vec<Option<RowPlan>>,
    pub(super) steps: Vec<Step>,
}

pub(super) fn plan(h: &Header, d: &Damage) -> Result<Plan, String> {
    let p = h.members.len();
    let lost = |v: &[bool]| (0..p).filter(|&m| v[m]).collect::<Vec<_>>();
    let mut steps = Vec::new();
    match h.scheme {
        Scheme::Xor | Scheme::Rs { .. } => {
            let code = StripeCode::new(h.scheme, p).map_err(|e| e.to_string())?;
            let rows = (0..p)
                .map(|r| {
                    code.plan_row(r, &d.lost_data, &d.lost_red)
                        .map(Some)
                        .map_err(|e| e.to_string())
                })
                .collect::<Result<Vec<_>, _>>()?;
            for l in lost(&d.lost_data) {
                for chunk in 0..code.data_chunks() {
                    let row = code.data_row(l, chunk);
                    let out = Output::Data { row, chunk };
                    steps.push(Step {
                        to: l,
                        out,
                        len: h.chunk_size,
                    });
                }
            }
            for l in lost(&d.lost_red) {
                for j in 0..code.parity_count() {
                    let out = Output::Parity { j };
                    steps.push(Step {
                        to: l,
                        out,
                        len: h.chunk_size,
                    });
                }
            }
            // Steps of one row side by side: they ask its sources for the
            // same pieces one after the other, served from one read.
            let row_of = |s: &Step| match s.out {
                Output::Data { row, .. } => row,
                Output::Parity { j } => code.parity_row(s.to, j),
                _ => 0,
            };
            steps.sort_by_key(|s| (row_of(s), s.to));
            Ok(Plan {
                code: Some(code),
                rows,
                steps,
            })
        }
        Scheme::Partner { copies } => {
            let c = copies as usize;
            // The surviving copy each lost member is rebuilt from.
            let mut copy = vec![None; p];
            for l in lost(&d.lost_data) {
                let (holder, slot) = partner::holders_of(l, p, c)
                    .into_iter()
                    .find(|&x| !d.lost_red[x])
                    .and_then(|x| partner::slot_of(l, x, p, c).map(|s| (x, s)))
                    .ok_or_else(|| format!("member {l} lost its files and every copy of them"))?;
                copy[l] = Some((holder, slot));
                let len = h.members[l].logical_len();
                steps.push(Step {
                    to: l,
                    out: Output::Copy { holder, slot },
                    len,
                });
            }
            for l in lost(&d.lost_red) {
                for (slot, of) in partner::stored_by(l, p, c).into_iter().enumerate() {
                    let len = h.members[of].logical_len();
                    let copy = copy[of];
                    steps.push(Step {
                        to: l,
                        out: Output::Hold { slot, of, copy },
                        len,
                    });
                }
            }
            // Everything made of one member's data side by side (its copy
            // back, the copies of it): served from one read.
            steps.sort_by_key(|s| match s.out {
                Output::Hold { of, .. } => (of, s.to),
                _ => (s.to, s.to),
            });
            Ok(Plan {
                code: None,
                rows: Vec::new(),
                steps,
            })
        }
        Scheme::Single => Err("SINGLE keeps no redundancy data: nothing can be rebuilt".into()),
    }
}

/// The requests for the data pieces of row `row` at `off` within the chunk,
/// one per data member of the row.
fn data_requests(
    code: &StripeCode,
    row: usize,
    chunk: u64,
    off: u64,
    len: u64,
) -> impl Iterator<Item = (usize, Request)> + '_ {
    code.data_members(row).into_iter().filter_map(move |i| {
        let offset = code.data_chunk(i, row)? as u64 * chunk + off;
        Some((i, Request::Data { offset, len }))
    })
}

/// One piece of one step, a place in the walk every member makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Position {
    /// Index into [`Plan::steps`].
    pub(super) step: usize,
    /// Offset within the step's output.
    pub(super) off: u64,
    /// Bytes.
    pub(super) len: u64,
}

impl Plan {
    /// Every piece of every step in `piece`-byte pieces, in the order all
    /// members walk them: piece by piece across all steps, so that the
    /// damaged members rebuild at the same time, each source serving them
    /// in turn, instead of one after the other.
    pub(super) fn positions(&self, piece: u64) -> Vec<Position> {
        let piece = piece.max(1);
        let longest = self.steps.iter().map(|s| s.len).max().unwrap_or(0);
        let mut out = Vec::new();
        let mut off = 0;
        while off < longest {
            for (i, s) in self.steps.iter().enumerate() {
                if off < s.len {
                    let len = piece.min(s.len - off);
                    out.push(Position { step: i, off, len });
                }
            }
            off += piece;
        }
        out
    }

    /// The sources of a step's piece at `off`, `len` bytes, in a fixed order.
    pub(super) fn sources(
        &self,
        h: &Header,
        s: &Step,
        off: u64,
        len: u64,
    ) -> Vec<(usize, Request)> {
        let chunk = h.chunk_size;
        match (s.out, &self.code) {
            (Output::Data { row, .. }, Some(code)) => self.row_sources(code, row, chunk, off, len),
            (Output::Parity { j }, Some(code)) => {
                let row = code.parity_row(s.to, j);
                self.row_sources(code, row, chunk, off, len)
            }
            (Output::Copy { holder, slot }, _)
            | (
                Output::Hold {
                    copy: Some((holder, slot)),
                    ..
                },
                _,
            ) => {
                let at = header_for(h, holder).payload_offset(slot);
                vec![(
                    holder,
                    Request::Payload {
                        offset: at + off,
                        len,
                    },
                )]
            }
            (Output::Hold { of, copy: None, .. }, _) => {
                vec![(of, Request::Data { offset: off, len })]
            }
            _ => Vec::new(),
        }
    }

    /// The sources of row `row`'s piece: its intact data members, and the
    /// holders of the parity equations that solve its lost data (none when
    /// nothing in the row is lost).
    fn row_sources(
        &self,
        code: &StripeCode,
        row: usize,
        chunk: u64,
        off: u64,
        len: u64,
    ) -> Vec<(usize, Request)> {
        let Some(rp) = &self.rows[row] else {
            return Vec::new();
        };
        let mut v: Vec<(usize, Request)> = data_requests(code, row, chunk, off, len)
            .filter(|(i, _)| !rp.lost_data.contains(i))
            .collect();
        for &j in &rp.equations {
            let holder = code.parity_holder(row, j);
            let offset = j as u64 * chunk + off;
            v.push((holder, Request::Payload { offset, len }));
        }
        v
    }
}
