//! Opening a shared file on every replica: the leader with the
//! application's flags (so `O_CREAT`, `O_EXCL` and `O_TRUNC` act once),
//! then the others.

use crate::coord::failover;
use crate::coord::file::SharedFile;
use crate::coord::parts::Parts;
use crate::coord::plan::plan_for;
use crate::coord::round::{
    agree_on_outcome, main_thread_only, on_leader, operation, refusing, Outcome,
};
use crate::coord::target::Target;
use crate::state::world;
use crate::sys::descriptors;
use crate::sys::errno::errno;
use crate::sys::real;
use redio_core::join;
use redio_protocols::leader::Reply;

/// Before a `distributed-separate` file is opened: parts left by an earlier
/// run (any rank) that no running job holds are dropped when the file is
/// truncated, joined in place otherwise, so that nothing written is lost.
/// Parts of this run (other ranks writing the same file) are never
/// touched. Runs on the leader.
fn settle_stale_parts(path: &std::path::Path, flags: i32) {
    let what = if flags & libc::O_TRUNC != 0 {
        join::Earlier::Drop
    } else {
        join::Earlier::Join
    };
    match join::settle_earlier_runs(path, world::run(), what) {
        Ok(joined) if joined.parts > 0 && what == join::Earlier::Join => crate::log!(
            Warn,
            "{}: joined {} parts left by an earlier run ({} bytes)",
            path.display(),
            joined.parts,
            joined.bytes
        ),
        Ok(joined) if joined.parts > 0 => crate::log!(
            Info,
            "{}: dropped {} parts left by an earlier run (opened with O_TRUNC)",
            path.display(),
            joined.parts
        ),
        Ok(_) => {}
        Err(e) => crate::log!(Error, "{}: parts of an earlier run: {e}", path.display()),
    }
}

/// The flags a replica other than the leader opens with, once the leader
/// has opened with `flags`. One shared file: without `O_CREAT`, `O_EXCL`
/// and `O_TRUNC`, which the leader's open applied once for all. A copy per
/// replica (one server per replica): each replica creates and truncates
/// its own copy as the leader did its own; `O_EXCL` becomes `O_TRUNC`,
/// because the leader's success means the file is new, and a stale copy
/// left on this replica's storage must not survive in it.
fn follower_flags(flags: i32, per_replica: bool) -> i32 {
    if !per_replica {
        return flags & !(libc::O_CREAT | libc::O_EXCL | libc::O_TRUNC);
    }
    if flags & libc::O_EXCL != 0 {
        (flags & !libc::O_EXCL) | libc::O_TRUNC
    } else {
        flags
    }
}

/// Opens a shared file on every replica: the leader with the application's
/// flags (so `O_CREAT`, `O_EXCL` and `O_TRUNC` act once), then the others
/// without them. Returns this replica's descriptor and its file.
pub fn open(resolved: &Target, flags: i32, mode: libc::mode_t) -> Outcome<(i32, SharedFile)> {
    main_thread_only("open", &resolved.path.display())?;
    let path = resolved.c_path.as_c_str();
    // redio places every write itself (O_APPEND: the writer of an append
    // sets the flag for that one write, coord::faults::append_to). A real
    // descriptor with O_APPEND would make Linux's pwrite ignore the
    // offset, and pieces written by several replicas would land in arrival
    // order.
    let real_flags = flags & !libc::O_APPEND;
    let plan = plan_for(resolved, flags);
    // A replica without a free descriptor refuses the open in its
    // announcement: every replica then fails it with EMFILE, and nothing
    // is created, as in a plain run at its limit.
    let refusal = descriptors::shortage();
    let announced = operation("open", resolved.app_path.display(), 0, 0);
    let (reply, leader) = refusing(refusal, || {
        on_leader(announced, || {
            if plan.separate {
                // std's file calls inside must reach the real functions.
                crate::sys::guard::inside(|| settle_stale_parts(&resolved.path, flags));
            }
            // Run again after a fail-over, the failed leader may have created
            // the file already: O_EXCL would fail where the first attempt did not.
            let flags = if failover::redoing() {
                real_flags & !libc::O_EXCL
            } else {
                real_flags
            };
            // SAFETY: a NUL-terminated path.
            let fd = unsafe { real::open(path.as_ptr(), flags, mode) };
            Reply {
                outcome: if fd < 0 {
                    Err(errno())
                } else {
                    Ok(i64::from(fd))
                },
                payload: Vec::new(),
            }
        })
    });
    let leader_fd = reply.outcome?;
    let me = world::identity().map_or(0, |i| i.placement.replica);
    // This replica's descriptor and whether it is a placeholder, or the
    // errno of a replica that cannot open its own copy.
    let opened: Outcome<(i32, bool)> = if leader {
        Ok((leader_fd as i32, false))
    } else {
        let follow = follower_flags(real_flags, resolved.per_replica);
        // SAFETY: a NUL-terminated path.
        match unsafe { real::open(path.as_ptr(), follow, mode) } {
            fd if fd >= 0 => Ok((fd, false)),
            // Its own copy: without it this replica's share of the data
            // would be lost; the open fails on every replica (below).
            _ if resolved.per_replica => Err(errno()),
            _ => {
                let why = std::io::Error::last_os_error();
                crate::log!(
                    Warn,
                    "{}: the leader opened it but this replica cannot ({why}); using a \
                     placeholder descriptor",
                    resolved.path.display()
                );
                // SAFETY: a constant path.
                match unsafe { real::open(c"/dev/null".as_ptr(), libc::O_RDWR, 0) } {
                    fd if fd >= 0 => Ok((fd, true)),
                    // No descriptor for a placeholder either: fail, never
                    // hand out -1 as an open file.
                    _ => Err(errno()),
                }
            }
        }
    };
    if resolved.per_replica {
        let mine = opened.map(|_| ());
        let agreed = agree_on_outcome(operation("open", resolved.app_path.display(), 1, 0), mine);
        if let Err(errno) = agreed {
            if let Ok((fd, _)) = opened {
                // SAFETY: this replica's own descriptor, not handed out.
                unsafe { real::close(fd) };
            }
            crate::log!(
                Error,
                "{}: a replica cannot open its own copy (errno {errno}); the open fails on \
                 every replica",
                resolved.path.display()
            );
            return Err(errno);
        }
    }
    // Only a copy per replica (after the agreement above), or a follower
    // left without even a placeholder (another thread took the last
    // descriptor since the announcement) fails here.
    let (fd, placeholder) = opened?;
    crate::log!(
        Debug,
        "open({}) coordinated: fd {fd}, read {}, write {}{}, voting {}, on_mismatch {}{}",
        resolved.path.display(),
        plan.read.name(),
        plan.write.name(),
        if plan.separate {
            " (separate files)"
        } else {
            ""
        },
        if plan.policy.checksums { "on" } else { "off" },
        plan.policy.on_mismatch.name(),
        if placeholder { ", placeholder" } else { "" }
    );
    let rank = world::identity().map_or(0, |i| i.placement.rank);
    let parts = plan.separate.then(|| Parts::new(world::run(), rank, me));
    Ok((
        fd,
        SharedFile::new(resolved, placeholder, flags, &plan, parts),
    ))
}

#[cfg(test)]
mod tests {
    use super::follower_flags;
    use libc::{O_APPEND, O_CREAT, O_EXCL, O_RDWR, O_TRUNC, O_WRONLY};

    #[test]
    fn followers_of_one_shared_file_never_create_or_truncate_again() {
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_APPEND;
        assert_eq!(follower_flags(flags, false), O_WRONLY | O_APPEND);
        assert_eq!(follower_flags(O_RDWR, false), O_RDWR);
    }

    #[test]
    fn followers_with_their_own_copy_create_it_and_drop_a_stale_one() {
        assert_eq!(
            follower_flags(O_WRONLY | O_CREAT | O_EXCL, true),
            O_WRONLY | O_CREAT | O_TRUNC
        );
        let flags = O_WRONLY | O_CREAT | O_TRUNC;
        assert_eq!(follower_flags(flags, true), flags);
    }
}
