//! The single-process operations of `redio parity … --offline` under the
//! path their callers know: encode, verify (assess, then recompute parity)
//! and rebuild over files gathered in one place, streaming in bounded
//! pieces. The collective job in the preload uses the same pieces.
//!
//! Nothing is defined here: each verb lives in its own module
//! ([`encode`](crate::encode), [`assess`](crate::assess),
//! [`rebuild`](crate::rebuild)) over shared ones
//! ([`redundancy_file`](crate::redundancy_file), [`logical`](crate::logical),
//! [`options`](crate::options), [`error`](crate::error)). This front
//! re-exports their public items so that callers keep compiling; new code
//! can name the verb module directly.

pub use crate::assess::{
    assess, check_files, check_redundancy, recompute_mismatches, recoverable, refuse_repeated_dirs,
    rewritten_after_encode, Assessment, SetState, Verdict,
};
pub use crate::encode::{encode_job, encode_set, header_for, template_header, MemberInput};
pub use crate::error::Error;
pub use crate::logical::{logical_reader, write_logical};
pub use crate::options::{Options, DEFAULT_PIECE};
pub use crate::rebuild::{check_before_rebuild, rebuild, RebuildReport};
pub use crate::redundancy_file::{
    check_payload, finish_file, inspect, open_redundancy, parse_name, read_header, Parsed,
};
