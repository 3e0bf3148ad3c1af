//! What a valid header is: fields consistent with each other and with the
//! scheme, sizes below the caps. [`Header::decode`] refuses a header that
//! fails this, so the verbs never see one whose offsets could overflow or
//! whose members contradict each other.

use super::{FormatError, Header, MemberMeta, MAX_LOGICAL_LEN};
use crate::scheme::Scheme;

impl Header {
    /// Checks the fields against each other and the scheme.
    pub fn validate(&self) -> Result<(), FormatError> {
        let bad = |m: String| Err(FormatError::Invalid(m));
        let p = self.members.len();
        if let Err(e) = self.scheme.validate(p) {
            return bad(e.to_string());
        }
        if self.member as usize >= p {
            return bad(format!(
                "member index {} but the set has {p} member(s)",
                self.member
            ));
        }
        if self.set_id >= self.set_count {
            return bad(format!(
                "set id {} but the job has {} set(s)",
                self.set_id, self.set_count
            ));
        }
        for (i, m) in self.members.iter().enumerate() {
            if m.logical_rank >= self.logical_ranks {
                return bad(format!(
                    "logical rank {} but the job has {} rank(s)",
                    m.logical_rank, self.logical_ranks
                ));
            }
            if let Some(j) = self.members[..i]
                .iter()
                .position(|o| o.logical_rank == m.logical_rank)
            {
                return bad(format!(
                    "members {j} and {i} both claim logical rank {} (forged or mixed-up header)",
                    m.logical_rank
                ));
            }
            let mut total = 0u64;
            for (k, f) in m.files.iter().enumerate() {
                if m.files[..k].iter().any(|o| o.path == f.path) {
                    return bad(format!("member {i} lists the file `{}` twice", f.shown()));
                }
                total = match total.checked_add(f.size) {
                    Some(t) if t <= MAX_LOGICAL_LEN => t,
                    _ => {
                        return bad(format!(
                            "member {i}'s file sizes add up to more than {MAX_LOGICAL_LEN} bytes"
                        ))
                    }
                };
            }
        }
        if self.payload.iter().any(|c| c.len > MAX_LOGICAL_LEN) {
            return bad(format!(
                "a payload chunk is longer than {MAX_LOGICAL_LEN} bytes"
            ));
        }
        let expect = match self.scheme {
            Scheme::Single => 0,
            Scheme::Partner { copies } => copies as usize,
            Scheme::Xor => 1,
            Scheme::Rs { k } => k as usize,
        };
        if self.payload.len() != expect {
            return bad(format!(
                "{} payload chunk(s), but {} stores {expect}",
                self.payload.len(),
                self.scheme
            ));
        }
        match self.scheme {
            Scheme::Xor | Scheme::Rs { .. } => {
                let p_k = (p - self.scheme.tolerance()) as u64;
                let max = self
                    .members
                    .iter()
                    .map(MemberMeta::logical_len)
                    .max()
                    .unwrap_or(0);
                if self.chunk_size != max.div_ceil(p_k) {
                    return bad(format!(
                        "chunk size {} does not fit the largest logical file ({max} bytes)",
                        self.chunk_size
                    ));
                }
                if let Some(c) = self.payload.iter().find(|c| c.len != self.chunk_size) {
                    return bad(format!(
                        "parity chunk of {} bytes, chunk size is {}",
                        c.len, self.chunk_size
                    ));
                }
            }
            Scheme::Partner { copies } => {
                let held = crate::partner::stored_by(self.member as usize, p, copies as usize);
                for (c, &m) in self.payload.iter().zip(&held) {
                    if c.len != self.members[m].logical_len() {
                        return bad(format!(
                            "copy of member {m} is {} bytes, its files are {}",
                            c.len,
                            self.members[m].logical_len()
                        ));
                    }
                }
            }
            Scheme::Single => {}
        }
        Ok(())
    }
}
