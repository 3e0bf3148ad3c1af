//! The shared file a coordinated call acts on, as the routing layer
//! resolved it.

use redio_core::config::{Config, FileFacts, OpenMode, ResolvedIo};
use std::ffi::CString;
use std::path::PathBuf;

/// A resolved shared path.
pub struct Target {
    /// The (possibly remapped) absolute path; the real call uses it.
    pub path: PathBuf,
    /// The path as the application named it, absolute and with symlinks
    /// resolved, before `remap`: the same on every replica, so it is what
    /// replicas announce.
    pub app_path: PathBuf,
    /// `path`, NUL-terminated, for the real call.
    pub c_path: CString,
    /// The file system's type, when the mount table knows it.
    pub fs_type: Option<String>,
    /// True when the replicas do not share one file (one server per
    /// replica, or different directories after `remap`).
    pub per_replica: bool,
}

impl Target {
    /// The I/O settings of `config` for this file, opened in `open_mode`
    /// (`None`: not known, so rules that name a mode do not apply).
    pub fn io(&self, config: &Config, open_mode: Option<OpenMode>) -> ResolvedIo {
        let path = self.path.to_string_lossy();
        config.io_for(&FileFacts {
            path: &path,
            fs_type: self.fs_type.as_deref(),
            open_mode,
        })
    }
}
