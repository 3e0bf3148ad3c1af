//! ULFM (User-Level Failure Mitigation) of Open MPI 5, found at run time.
//!
//! The `MPIX_Comm_*` fault-tolerance functions are not part of the MPI
//! bindings and must not be linked (an undefined symbol in a cdylib links
//! and then fails to load): they are resolved once in the MPI library
//! (`sys::symbols::lookup_mpi`), the profiling names `PMPIX_*` first, so redio
//! calls the implementation directly like every other `PMPI_*` call.
//!
//! Only an Open MPI 5 build uses them: MPICH exports the same names, but its
//! implementations assert (see the MPI notes), and Open MPI 4.1 has none.
//! Everything here returns MPI error codes (`Err(code)`); the communicators
//! used must have an error handler that returns (`MPI_ERRORS_RETURN`), or a
//! failure aborts the job before these functions see it.
//!
//! `crate::ft::ulfm_probe` is a test hook (`REDIO_TEST_ULFM_PROBE`): a real
//! failure and the full revoke/shrink/agree cycle on the real world.

use crate::comm::ffi;

use crate::comm::pmpi;
use crate::sys::guard::InsideMpi;
use std::ffi::c_int;
use std::sync::OnceLock;

/// Reads a constant exported by the C shim (`shim.c`).
macro_rules! shim {
    ($name:ident) => {{
        // SAFETY: the shim's constants are initialised, immutable C globals.
        #[allow(unused_unsafe)]
        let value = unsafe { ffi::$name };
        value
    }};
}
pub(crate) use shim;

type CommFn = unsafe extern "C" fn(ffi::MPI_Comm) -> c_int;
type CommOutFn = unsafe extern "C" fn(ffi::MPI_Comm, *mut ffi::MPI_Comm) -> c_int;
type CommIntFn = unsafe extern "C" fn(ffi::MPI_Comm, *mut c_int) -> c_int;
type CommGroupFn = unsafe extern "C" fn(ffi::MPI_Comm, *mut ffi::MPI_Group) -> c_int;

/// The resolved functions. The first five are required; the last two are
/// newer (Open MPI 5.0.x has both) and optional.
struct Api {
    revoke: CommFn,
    shrink: CommOutFn,
    agree: CommIntFn,
    failure_ack: CommFn,
    failure_get_acked: CommGroupFn,
    get_failed: Option<CommGroupFn>,
    is_revoked: Option<CommIntFn>,
}

/// Looks `name` up as `PMPIX_<name>`, else `MPIX_<name>`.
fn lookup(name: &str) -> Option<usize> {
    ["PMPIX_", "MPIX_"].iter().find_map(|prefix| {
        let symbol = std::ffi::CString::new(format!("{prefix}{name}")).ok()?;
        crate::sys::symbols::lookup_mpi(&symbol)
    })
}

fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(|| {
        if !cfg!(redio_mpi = "openmpi5") {
            return None;
        }
        // SAFETY: each address is the named function of the loaded libmpi,
        // whose C signature (mpiext_ftmpi_c.h) matches the pointer type.
        unsafe {
            Some(Api {
                revoke: std::mem::transmute::<usize, CommFn>(lookup("Comm_revoke")?),
                shrink: std::mem::transmute::<usize, CommOutFn>(lookup("Comm_shrink")?),
                agree: std::mem::transmute::<usize, CommIntFn>(lookup("Comm_agree")?),
                failure_ack: std::mem::transmute::<usize, CommFn>(lookup("Comm_failure_ack")?),
                failure_get_acked: std::mem::transmute::<usize, CommGroupFn>(lookup(
                    "Comm_failure_get_acked",
                )?),
                get_failed: lookup("Comm_get_failed")
                    .map(|a| std::mem::transmute::<usize, CommGroupFn>(a)),
                is_revoked: lookup("Comm_is_revoked")
                    .map(|a| std::mem::transmute::<usize, CommIntFn>(a)),
            })
        }
    })
    .as_ref()
}

/// Turns an MPI return code into a `Result`.
fn ok(rc: c_int) -> Result<(), c_int> {
    if rc == shim!(redio_mpi_success) {
        Ok(())
    } else {
        Err(rc)
    }
}

fn require() -> Result<&'static Api, c_int> {
    // MPI_ERR_UNSUPPORTED_OPERATION would be nicer, but MPI_ERR_OTHER (16
    // in both Open MPI versions) is what every caller can print.
    api().ok_or(ffi::MPI_ERR_OTHER as c_int)
}

/// True when this is an Open MPI 5 build and the loaded libmpi exports the
/// ULFM functions. Says nothing about whether the job was started with
/// fault tolerance on: see [`enabled`].
pub fn available() -> bool {
    api().is_some()
}

/// True when [`available`] and the job runs with fault tolerance enabled
/// (`mpirun --with-ft ulfm`): the `MPIX_FT` attribute of the real
/// `MPI_COMM_WORLD` is set and true. Call after `MPI_Init`.
pub fn enabled() -> bool {
    if !available() || shim!(redio_mpix_ft) < 0 {
        return false;
    }
    let _inside = InsideMpi::enter();
    let mut value: *mut c_int = std::ptr::null_mut();
    let mut found: c_int = 0;
    // SAFETY: MPIX_FT is a predefined attribute key whose value is an int*.
    let rc = unsafe {
        pmpi::PMPI_Comm_get_attr(
            shim!(redio_mpi_comm_world),
            shim!(redio_mpix_ft),
            (&mut value as *mut *mut c_int).cast(),
            &mut found,
        )
    };
    // SAFETY: when found, the library hands out a valid int*.
    rc == shim!(redio_mpi_success) && found != 0 && !value.is_null() && unsafe { *value } != 0
}

/// `MPIX_Comm_revoke`: marks `comm` revoked on every member, so that every
/// pending and future operation on it (except agree and shrink) fails with
/// `MPIX_ERR_REVOKED`. Not collective; any one member may call it.
///
/// # Safety
/// `comm` is a valid communicator of this process.
pub unsafe fn revoke(comm: ffi::MPI_Comm) -> Result<(), c_int> {
    let api = require()?;
    let _inside = InsideMpi::enter();
    // SAFETY: `comm` is a communicator handle of the loaded MPI.
    ok(unsafe { (api.revoke)(comm) })
}

/// `MPIX_Comm_shrink`: collective over the live members of `comm` (revoked
/// or not); returns a new communicator without the failed processes, ranks
/// in the old order. The caller frees it.
///
/// # Safety
/// `comm` is a valid communicator of this process.
pub unsafe fn shrink(comm: ffi::MPI_Comm) -> Result<ffi::MPI_Comm, c_int> {
    let api = require()?;
    let _inside = InsideMpi::enter();
    let mut out = shim!(redio_mpi_comm_null);
    // SAFETY: `comm` is a communicator handle; `out` receives the new one.
    ok(unsafe { (api.shrink)(comm, &mut out) })?;
    Ok(out)
}

/// `MPIX_Comm_agree`: fault-tolerant agreement; `flags` becomes the bitwise
/// AND of every live member's value. Also works on a revoked communicator.
///
/// `Err(code)` with [`is_proc_failed`] true means a member failed and the
/// failure was not acknowledged ([`failure_ack`]) before the call: `flags`
/// holds the agreed value all the same, and every live member gets the same
/// error.
///
/// # Safety
/// `comm` is a valid communicator of this process.
pub unsafe fn agree(comm: ffi::MPI_Comm, flags: &mut i32) -> Result<(), c_int> {
    let api = require()?;
    let _inside = InsideMpi::enter();
    // SAFETY: `comm` is a communicator handle; `flags` is a valid int.
    ok(unsafe { (api.agree)(comm, flags) })
}

/// `MPIX_Comm_failure_ack`: acknowledges the failures of `comm` known
/// locally so far: wildcard receives and [`agree`] stop reporting them.
///
/// # Safety
/// `comm` is a valid communicator of this process.
pub unsafe fn failure_ack(comm: ffi::MPI_Comm) -> Result<(), c_int> {
    let api = require()?;
    let _inside = InsideMpi::enter();
    // SAFETY: `comm` is a communicator handle of the loaded MPI.
    ok(unsafe { (api.failure_ack)(comm) })
}

/// `MPIX_Comm_is_revoked`, or `Err(MPI_ERR_OTHER)` where the library lacks it.
///
/// # Safety
/// `comm` is a valid communicator of this process.
pub unsafe fn is_revoked(comm: ffi::MPI_Comm) -> Result<bool, c_int> {
    let is_revoked = require()?.is_revoked.ok_or(ffi::MPI_ERR_OTHER as c_int)?;
    let _inside = InsideMpi::enter();
    let mut flag = 0;
    // SAFETY: `comm` is a communicator handle; `flag` is a valid int.
    ok(unsafe { is_revoked(comm, &mut flag) })?;
    Ok(flag != 0)
}

/// The ranks in `comm` of the members this process knows to have failed,
/// ascending. Local knowledge, not an agreement: use [`agree`] (or compare
/// sizes after [`shrink`]) to share it.
///
/// Uses `MPIX_Comm_get_failed` where present; otherwise acknowledges the
/// known failures (`MPIX_Comm_failure_ack`, a side effect) and reads them
/// back with `MPIX_Comm_failure_get_acked`.
///
/// # Safety
/// `comm` is a valid communicator of this process.
pub unsafe fn failed_ranks(comm: ffi::MPI_Comm) -> Result<Vec<i32>, c_int> {
    let api = require()?;
    let _inside = InsideMpi::enter();
    let mut failed = shim!(redio_mpi_group_null);
    // SAFETY: handles of the loaded MPI; every group made here is freed.
    unsafe {
        match api.get_failed {
            Some(get_failed) => ok(get_failed(comm, &mut failed))?,
            None => {
                ok((api.failure_ack)(comm))?;
                ok((api.failure_get_acked)(comm, &mut failed))?;
            }
        }
        let result = translate_to_comm(comm, failed);
        pmpi::PMPI_Group_free(&mut failed);
        let mut ranks = result?;
        ranks.sort_unstable();
        Ok(ranks)
    }
}

/// Ranks in `comm` of every member of `group` (a subgroup of its group).
///
/// # Safety
/// `comm` and `group` are valid handles.
unsafe fn translate_to_comm(comm: ffi::MPI_Comm, group: ffi::MPI_Group) -> Result<Vec<i32>, c_int> {
    let mut size = 0;
    ok(pmpi::PMPI_Group_size(group, &mut size))?;
    if size == 0 {
        return Ok(Vec::new());
    }
    let mut all = shim!(redio_mpi_group_null);
    ok(pmpi::PMPI_Comm_group(comm, &mut all))?;
    let from: Vec<c_int> = (0..size).collect();
    let mut to = vec![0; size as usize];
    let rc = pmpi::PMPI_Group_translate_ranks(group, size, from.as_ptr(), all, to.as_mut_ptr());
    pmpi::PMPI_Group_free(&mut all);
    ok(rc)?;
    Ok(to)
}

/// The error class of `code`, or `None` if MPI does not know it.
fn error_class(code: c_int) -> Option<c_int> {
    let _inside = InsideMpi::enter();
    let mut class = 0;
    // SAFETY: PMPI_Error_class only reads `code` and writes `class`.
    (unsafe { pmpi::PMPI_Error_class(code, &mut class) } == shim!(redio_mpi_success))
        .then_some(class)
}

/// True when `code` (an MPI return code) is of class
/// `MPIX_ERR_PROC_FAILED`: a process involved in the operation failed.
/// Always false outside an Open MPI 5 build.
pub fn is_proc_failed(code: c_int) -> bool {
    code != shim!(redio_mpi_success)
        && shim!(redio_mpix_err_proc_failed) >= 0
        && error_class(code) == Some(shim!(redio_mpix_err_proc_failed))
}

/// True when `code` is of class `MPIX_ERR_REVOKED`: the communicator was
/// revoked by some member. Always false outside an Open MPI 5 build.
pub fn is_revoked_error(code: c_int) -> bool {
    code != shim!(redio_mpi_success)
        && shim!(redio_mpix_err_revoked) >= 0
        && error_class(code) == Some(shim!(redio_mpix_err_revoked))
}
