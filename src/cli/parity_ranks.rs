//! The `-n` of a collective `redio parity` command, checked before
//! anything is launched: against the redundancy headers readable here,
//! and against what this machine can start (issue 44: `-n 100000` with
//! an unreadable rank 0 launched 100,000 workers for 98 s, then failed
//! with "Too many open files").

use redio_parity::worker_args::JobSpec;
use std::path::PathBuf;

/// Ranks whose redundancy directories are looked at for a header: enough
/// to get past a few lost or unreadable ones, without stat-ing thousands.
const PROBED_RANKS: u32 = 64;

/// File descriptors the launcher keeps per process it starts on its own
/// node (MPICH's proxy and Open MPI's daemon: the process's stdout,
/// stderr and stdin pipes and its PMI connection). Measured under
/// `ulimit -n 128`: MPICH starts 28 processes and fails at 32; Open MPI
/// 4.1 starts 24 and hangs at 28.
pub const FDS_PER_LOCAL_RANK: u64 = 4;

/// Descriptors left for the launcher itself (with the above: 24 processes
/// under `ulimit -n 128`, 248 under 1024).
const FDS_RESERVED: u64 = 32;

/// Refuses `ranks` if a readable header records another count, or if the
/// workers would all start on this node (`local`: no launcher argument
/// places them elsewhere) and this node cannot hold that many.
pub fn check(spec: &JobSpec, ranks: u32, headers: bool, local: bool) -> Result<(), String> {
    if headers {
        if let Some((n, path)) = recorded_ranks(spec, ranks) {
            if n != ranks {
                return Err(format!(
                    "-n {ranks}, but {} records a job of {n} logical rank(s): run with -n {n}",
                    path.display()
                ));
            }
        }
    }
    if local {
        if let Some(why) = local_limit(ranks) {
            return Err(format!(
                "-n {ranks}: all {ranks} workers would start on this node (no --launcher-arg \
                 places them elsewhere), but {why}; give the job's real rank count, raise the \
                 limit, or spread the ranks over nodes with --launcher-arg (e.g. a host file)"
            ));
        }
    }
    Ok(())
}

/// The number of logical ranks the first readable redundancy file of the
/// first ranks records, and that file. Rank 0 first; an unreadable or
/// lost directory passes to the next rank.
fn recorded_ranks(spec: &JobSpec, ranks: u32) -> Option<(u32, PathBuf)> {
    (0..ranks.min(PROBED_RANKS)).find_map(|rank| {
        let dir = spec.redundancy_dir_of(rank, ranks).ok()?;
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .filter(|n| redio_parity::redundancy_file::parse_name(n, &spec.prefix).is_some())
            .collect();
        names.sort();
        names.into_iter().find_map(|n| {
            let path = dir.join(n);
            let parsed = redio_parity::redundancy_file::read_header(&path).ok()?;
            Some((parsed.header.logical_ranks, path))
        })
    })
}

/// Why this node cannot start `ranks` processes under one launcher, if it
/// cannot: the launcher's descriptors (`ulimit -n`) or the user's process
/// limit (`ulimit -u`).
fn local_limit(ranks: u32) -> Option<String> {
    let ranks = u64::from(ranks);
    if let Some(files) = soft_limit(libc::RLIMIT_NOFILE) {
        let most = files.saturating_sub(FDS_RESERVED) / FDS_PER_LOCAL_RANK;
        if ranks > most {
            return Some(format!(
                "the launcher needs about {FDS_PER_LOCAL_RANK} file descriptors per process and \
                 `ulimit -n` allows {files} (at most {most} processes)"
            ));
        }
    }
    match soft_limit(libc::RLIMIT_NPROC) {
        Some(procs) if ranks > procs => Some(format!(
            "`ulimit -u` allows {procs} processes for this user"
        )),
        _ => None,
    }
}

/// The soft limit of `resource`, `None` if unlimited or unknown.
fn soft_limit(resource: libc::__rlimit_resource_t) -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid resource and a pointer to a live rlimit.
    if unsafe { libc::getrlimit(resource, &mut limit) } != 0 {
        return None;
    }
    (limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}
