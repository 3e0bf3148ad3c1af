//! From the path an application passes to the path redio acts on, and its
//! class.
//!
//! 1. Make it absolute: relative to the working directory, or to the
//!    directory behind an `openat` descriptor.
//! 2. Resolve symlinks in the part that exists (a file about to be created
//!    has a parent that exists).
//! 3. Apply `remap` (per-replica paths, e.g. each replica's own node-local
//!    directory when replicas share a node).
//! 4. Classify with the rules of [`redio_core::fsclass`].
//! 5. When every replica of this rank runs on this node, a node-local path
//!    that `remap` leaves alone is one file for all of them: it is
//!    coordinated like a shared one, if every replica names it at this
//!    point ([`colocated`]): checked in a round of its own ([`resolve`]),
//!    or by the call's first operation ([`resolve_tentatively`]).

use crate::coord::target::Target;
use crate::io::route::Bypass;
use crate::state::settings;
use crate::state::world;
use crate::sys::guard::InsideMpiIo;
use redio_core::config::{Config, OpenMode, ReadProtocol, ResolvedIo, WriteProtocol};
use redio_core::fsclass::{self, Class, Mount};
use std::ffi::{CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A path as redio acts on it.
pub struct Resolved {
    /// The (possibly remapped) absolute path; the real call uses it.
    pub path: PathBuf,
    /// The path as the application named it, absolute and with symlinks
    /// resolved, before `remap`: the same on every replica.
    pub app_path: PathBuf,
    /// The same, NUL-terminated, for the real call.
    pub c_path: CString,
    /// Shared, local or system.
    pub class: Class,
    /// True when `remap` rewrote the path.
    pub remapped: bool,
    /// Shared, but configured with protocol `none` for reads and writes.
    pub uncoordinated: bool,
    /// The file system's type, when the mount table knows it.
    pub fs_type: Option<String>,
    /// True when the replicas do not share one file: `remap` sends them to
    /// paths that are stored in different places (one server per replica,
    /// or different directories). Paths that differ only by mount point,
    /// with the same mount source (one server, mounted on every node), are
    /// one file.
    pub per_replica: bool,
    /// A node-local path of co-located replicas that the replicas named
    /// differently (a process id in it): each keeps its own file, and a
    /// call naming it with another path (`rename` of a temporary file)
    /// passes through as a whole.
    pub named_apart: bool,
    /// A node-local path of co-located replicas, treated as shared on the
    /// condition that every replica names it: the call's first coordinated
    /// operation checks that ([`crate::coord::round::tentatively`]), and
    /// the call passes through when the names differ. Only from
    /// [`resolve_tentatively`].
    pub tentative: bool,
}

impl Resolved {
    /// The shared file coordination acts on.
    pub fn target(&self) -> Target {
        Target {
            path: self.path.clone(),
            app_path: self.app_path.clone(),
            c_path: self.c_path.clone(),
            fs_type: self.fs_type.clone(),
            per_replica: self.per_replica,
        }
    }

    /// The I/O settings of `config` for this file (see [`Target::io`]).
    pub fn io(&self, config: &Config, open_mode: Option<OpenMode>) -> ResolvedIo {
        self.target().io(config, open_mode)
    }
}

impl Resolved {
    /// Why calls on this path pass through, or `None` when they are
    /// coordinated.
    pub fn bypass(&self) -> Option<Bypass> {
        match self.class {
            Class::System => Some(Bypass::System),
            Class::Local => Some(Bypass::NodeLocal),
            Class::Shared if self.uncoordinated => Some(Bypass::ProtocolNone),
            Class::Shared => None,
        }
    }

    /// The path for a real call that passes through: the remapped one, or
    /// the application's own spelling when nothing was rewritten.
    pub fn for_real_call(&self, original: *const libc::c_char) -> *const libc::c_char {
        if self.remapped {
            self.c_path.as_ptr()
        } else {
            original
        }
    }
}

static MOUNTS: OnceLock<Vec<Mount>> = OnceLock::new();

/// Reads the mount table once (at `MPI_Init`, inside redio).
pub fn load_mounts() {
    crate::sys::guard::inside(|| {
        let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let _ = MOUNTS.set(fsclass::parse_mountinfo(&text));
    });
}

/// Resolves and classifies `path` given relative to `dirfd` (`AT_FDCWD` for
/// the working directory). Must run inside redio (`crate::io::route::enter`).
///
/// A node-local path of co-located replicas costs one round of the replica
/// set here, to learn whether every replica names it.
pub fn resolve(dirfd: libc::c_int, path: &CStr) -> Resolved {
    let mut resolved = resolve_tentatively(dirfd, path);
    if resolved.tentative {
        resolved.tentative = false;
        if !crate::coord::round::same_path_everywhere(&resolved.path) {
            resolved.class = Class::Local;
            resolved.named_apart = true;
        }
    }
    resolved
}

/// [`resolve`], but a node-local path of co-located replicas comes back
/// [`Resolved::tentative`]: the caller runs its call under
/// [`crate::coord::round::tentatively`], whose first operation checks the
/// names on the way (one round less per call: `benches/colocated.py`).
pub fn resolve_tentatively(dirfd: libc::c_int, path: &CStr) -> Resolved {
    let raw = Path::new(OsStr::from_bytes(path.to_bytes()));
    // Fast path: system paths are never managed and need no resolution.
    if fsclass::system_prefix(raw).is_some() {
        return Resolved {
            path: raw.to_path_buf(),
            app_path: raw.to_path_buf(),
            c_path: path.to_owned(),
            class: Class::System,
            remapped: false,
            uncoordinated: false,
            fs_type: None,
            per_replica: false,
            named_apart: false,
            tentative: false,
        };
    }
    let absolute = absolute(dirfd, raw);
    let canonical = canonical(&absolute);
    let (Some(config), Some(identity)) = (settings::get(), world::identity()) else {
        return Resolved {
            c_path: c_string(&absolute),
            app_path: canonical,
            path: absolute,
            class: Class::Local,
            remapped: false,
            uncoordinated: false,
            fs_type: None,
            per_replica: false,
            named_apart: false,
            tentative: false,
        };
    };
    let remapped = fsclass::remap(
        config,
        &canonical,
        identity.placement.replica,
        identity.placement.rank,
    );
    let mounts = MOUNTS.get().map_or(&[][..], Vec::as_slice);
    // Does replica 1 land on other storage than replica 0?
    let rank = identity.placement.rank;
    let storage = |replica| {
        let path = fsclass::remap(config, &canonical, replica, rank);
        fsclass::storage_of(path.as_deref().unwrap_or(&canonical), mounts)
    };
    let per_replica = identity.degree > 1 && storage(0) != storage(1);
    let app_path = canonical.clone();
    if identity.degree > 1 && InsideMpiIo::active() && is_mpiio_bookkeeping(&canonical) {
        return bookkeeping_of_this_replica(canonical, identity.placement.replica);
    }
    let target = remapped.clone().unwrap_or(canonical);
    let verdict = fsclass::classify(config, &target, mounts);
    let mut class = verdict.class;
    let tentative = class == Class::Local && remapped.is_none() && colocated(&target);
    if tentative {
        class = Class::Shared;
    }
    let fs_type = (verdict.fs_type != fsclass::UNKNOWN_FS_TYPE).then_some(verdict.fs_type);
    // Keep the application's own spelling when nothing was rewritten, so
    // that a pass-through call behaves exactly as without redio.
    let path_for_call = if remapped.is_some() {
        target.clone()
    } else {
        absolute
    };
    let mut resolved = Resolved {
        c_path: c_string(&path_for_call),
        app_path,
        path: target,
        class,
        remapped: remapped.is_some(),
        uncoordinated: false,
        fs_type,
        per_replica,
        named_apart: false,
        tentative,
    };
    resolved.uncoordinated = class == Class::Shared && {
        let io = resolved.io(config, None);
        io.read == ReadProtocol::None && io.write == WriteProtocol::None
    };
    resolved
}

/// Trees of the operating system that applications read and never write:
/// co-located replicas read them on their own, uncoordinated.
const SYSTEM_TREES: &[&str] = &[
    "/usr", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/boot", "/snap",
];

/// For a node-local `path` that `remap` leaves alone: true when every
/// replica of this rank runs on this node (so `path` may be one file for
/// all of them), the path is not in a [`SYSTEM_TREES`] tree, and the call
/// is coordinated at all: on the thread that called `MPI_Init` (elsewhere
/// there is no deterministic order to meet the others in), before
/// `MPI_Finalize`. Whether every replica names `path` is then learnt in a
/// round of the replica set ([`resolve`], or the call's own first
/// operation under [`resolve_tentatively`]).
fn colocated(path: &Path) -> bool {
    world::colocated()
        && crate::state::phase::active()
        && crate::state::phase::on_main_thread()
        && !SYSTEM_TREES.iter().any(|tree| path.starts_with(tree))
}

/// True for the files MPI-IO libraries create beside (or for) a data file
/// to keep their own state, found by tracing `MPI_File_*` calls with strace
/// (docs/io-stacks.md):
/// - ROMIO's shared file pointer: `.<file>.shfp.<random>.<pid of rank 0>`;
/// - OMPIO's `sharedfp/lockedfile`: `<file>-<job id>-<pid of rank 0>.lock`;
/// - OMPIO's `sharedfp/sm`: `<file>_cid-<communicator id>-<rank>.sm` in
///   the job's session directory.
///
/// Each replica world keeps its own: the names of the first two hold a
/// process id, so they differ between replicas (and would look like a
/// divergence), and the third would be one counter for every replica.
pub fn is_mpiio_bookkeeping(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(OsStr::to_str) else {
        return false;
    };
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if name.starts_with('.') && name.contains(".shfp.") {
        return true;
    }
    if let Some(stem) = name.strip_suffix(".lock") {
        let mut fields = stem.rsplitn(3, '-');
        let (pid, job, file) = (fields.next(), fields.next(), fields.next());
        return matches!((pid, job, file), (Some(p), Some(j), Some(f)) if numeric(p) && numeric(j) && !f.is_empty());
    }
    is_sm_file(name)
}

/// A bookkeeping file of the MPI-IO library: this replica's own, at
/// `<path>.redio-r<replica>` ([`sm_file_of_this_replica`] for OMPIO's
/// sharedfp/sm file), passed through.
fn bookkeeping_of_this_replica(path: PathBuf, replica: u32) -> Resolved {
    let own = sm_file_of_this_replica(&path, replica).unwrap_or_else(|| {
        let mut own = path.clone().into_os_string();
        own.push(format!(".redio-r{replica}"));
        let own = PathBuf::from(own);
        restore_session_directory(&own);
        own
    });
    Resolved {
        c_path: c_string(&own),
        app_path: path,
        path: own,
        class: Class::Local,
        remapped: true,
        uncoordinated: false,
        fs_type: None,
        per_replica: true,
        named_apart: false,
        tentative: false,
    }
}

/// Where this replica keeps OMPIO's sharedfp/sm file `path`: in the run's
/// directory (`<run dir>/ompio-sm/<name>.redio-r<replica>`), not in Open
/// MPI's session directory, which Open MPI 4.1 removes when a process dies
/// (measured: `/tmp/ompi.<host>.<uid>/pid.<mpirun>/1` present, then gone).
/// The sm file is made at every `MPI_File_open`, so a survivor's open then
/// failed (`ENOENT`, then `MPI_ERR_OTHER`; docs/io-stacks.md). Making the
/// directory again when it was missing left a race with that removal: a
/// clean-clone run failed so once (r=3, the victim dying in the `lstat` of
/// OMPIO's open). `None` outside `redio run` (no run directory) or for
/// other files. The name holds the communicator's id and the rank (strace:
/// `…_cid--1-0.sm`, `…_cid--1-1.sm`), which every replica world repeats:
/// the suffix keeps the worlds apart.
fn sm_file_of_this_replica(path: &Path, replica: u32) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    if !is_sm_file(name) {
        return None;
    }
    let run_dir = std::env::var_os(redio_core::outcome::ENV_RUN_DIR)?;
    let dir = Path::new(&run_dir).join("ompio-sm");
    make_private_dir(&dir).ok()?;
    Some(dir.join(format!("{name}.redio-r{replica}")))
}

/// Makes `dir` and its missing parents, this user's only (0700), with
/// the real file calls.
fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    crate::sys::guard::inside(|| {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
    })
}

/// OMPIO's sharedfp/sm file: `<file>_cid-<communicator id>-<rank>.sm`.
fn is_sm_file(name: &str) -> bool {
    name.ends_with(".sm") && name.contains("_cid-")
}

/// Outside `redio run`, where [`sm_file_of_this_replica`] has no run
/// directory: makes Open MPI's session directory again when it is missing
/// before this replica's sm file `sm_file` is created in it. That narrows
/// the trap above (Open MPI may still remove it between this check and
/// the open), it does not close it.
fn restore_session_directory(sm_file: &Path) {
    let is_sm = sm_file
        .file_name()
        .and_then(OsStr::to_str)
        .and_then(|name| name.rsplit_once(".redio-r"))
        .is_some_and(|(name, _)| is_sm_file(name));
    let Some(dir) = sm_file.parent().filter(|_| is_sm) else {
        return;
    };
    // std's file calls inside must reach the real functions.
    crate::sys::guard::inside(|| {
        if !dir.exists() {
            let made = make_private_dir(dir);
            crate::log!(
                Info,
                "{}: OMPIO's session directory was gone (removed by Open MPI after a death); \
                 made again: {made:?}",
                dir.display()
            );
        }
    });
}

/// Resolves and classifies the real path `real` of a descriptor (from
/// `/proc/self/fd`): mapped back through `remap` first, so that every
/// replica announces the same path. Must run inside redio.
pub fn resolve_real(real: &Path) -> Resolved {
    let named = match (settings::get(), world::identity()) {
        (Some(config), Some(identity)) => fsclass::unremap(
            config,
            real,
            identity.placement.replica,
            identity.placement.rank,
        ),
        _ => None,
    };
    let path = named.as_deref().unwrap_or(real);
    resolve(libc::AT_FDCWD, &c_string(path))
}

fn absolute(dirfd: libc::c_int, path: &Path) -> PathBuf {
    if path.is_absolute() {
        return path.to_path_buf();
    }
    let base = if dirfd == libc::AT_FDCWD {
        std::env::current_dir().ok()
    } else {
        std::fs::read_link(format!("/proc/self/fd/{dirfd}")).ok()
    };
    base.map_or_else(|| path.to_path_buf(), |base| base.join(path))
}

/// Resolves symlinks and `..` in the longest existing prefix of `path`.
fn canonical(path: &Path) -> PathBuf {
    let mut existing = path;
    let mut tail = Vec::new();
    loop {
        if let Ok(resolved) = std::fs::canonicalize(existing) {
            let mut out = resolved;
            out.extend(tail.iter().rev());
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_owned());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

fn c_string(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::is_mpiio_bookkeeping;
    use std::path::Path;

    #[test]
    fn the_mpiio_libraries_bookkeeping_files_are_recognised_and_data_files_are_not() {
        for name in [
            "/s/.ckpt.dat.shfp.1706532904.14763",
            "/s/ckpt.dat-916455425-23138.lock",
            "/tmp/ompi.vm.0/pid.12020/1/ckpt.dat_cid--1-0.sm",
        ] {
            assert!(is_mpiio_bookkeeping(Path::new(name)), "{name}");
        }
        for name in [
            "/s/ckpt.dat",
            "/s/.hidden.dat",
            "/s/ckpt.dat.locktest.0",
            "/s/run.lock",
            "/s/a-b.lock",
            "/s/data-1-x.lock",
            "/s/model.sm",
        ] {
            assert!(!is_mpiio_bookkeeping(Path::new(name)), "{name}");
        }
    }
}
