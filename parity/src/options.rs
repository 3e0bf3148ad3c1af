//! What every file-level operation (encode, assess, rebuild) is told:
//! the redundancy file name prefix, the piece size, and progress lines.

/// Default piece size: what one step of the pipeline holds per buffer.
pub const DEFAULT_PIECE: usize = 1 << 20;

/// Options shared by encode, assess and rebuild.
#[derive(Debug, Clone)]
pub struct Options {
    /// Redundancy file name prefix.
    pub prefix: String,
    /// Piece size in bytes.
    pub piece: usize,
    /// Print a progress line on stderr at this interval (None: silent).
    pub progress: Option<std::time::Duration>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            prefix: "redio-parity".into(),
            piece: DEFAULT_PIECE,
            progress: None,
        }
    }
}
