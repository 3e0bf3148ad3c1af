//! The plan every member of the set derives alike from the header and the
//! damage: the steps in their fixed order (each damaged member's data,
//! then each lost redundancy file), and for each piece of a step which
//! sources answer and what they are asked for (the 17-byte [`Request`]).
//! Being the same everywhere is what lets sources answer without being
//! told the plan, and keeps the waits free of cycles.

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
    /// PARTNER: copy `slot` of the rebuilder's redundancy file, the data of `of`.
    Hold { slot: usize, of: usize },
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
    /// Index of the first phase-2 step.
    pub(super) phase2: usize,
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
            let phase2 = steps.len();
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
            Ok(Plan {
                code: Some(code),
                rows,
                steps,
                phase2,
            })
        }
        Scheme::Partner { copies } => {
            let c = copies as usize;
            for l in lost(&d.lost_data) {
                let (holder, slot) = partner::holders_of(l, p, c)
                    .into_iter()
                    .find(|&x| !d.lost_red[x])
                    .and_then(|x| partner::slot_of(l, x, p, c).map(|s| (x, s)))
                    .ok_or_else(|| format!("member {l} lost its files and every copy of them"))?;
                let len = h.members[l].logical_len();
                steps.push(Step {
                    to: l,
                    out: Output::Copy { holder, slot },
                    len,
                });
            }
            let phase2 = steps.len();
            for l in lost(&d.lost_red) {
                for (slot, of) in partner::stored_by(l, p, c).into_iter().enumerate() {
                    let len = h.members[of].logical_len();
                    steps.push(Step {
                        to: l,
                        out: Output::Hold { slot, of },
                        len,
                    });
                }
            }
            Ok(Plan {
                code: None,
                rows: Vec::new(),
                steps,
                phase2,
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

impl Plan {
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
            (Output::Data { row, .. }, Some(code)) => {
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
            (Output::Parity { j }, Some(code)) => {
                let row = code.parity_row(s.to, j);
                data_requests(code, row, chunk, off, len).collect()
            }
            (Output::Copy { holder, slot }, _) => {
                let at = header_for(h, holder).payload_offset(slot);
                vec![(
                    holder,
                    Request::Payload {
                        offset: at + off,
                        len,
                    },
                )]
            }
            (Output::Hold { of, .. }, _) => vec![(of, Request::Data { offset: off, len })],
            _ => Vec::new(),
        }
    }
}
