//! Refuses to run inside a program linked to the other MPI implementation.
//!
//! MPICH handles are integers and Open MPI handles are pointers: a library
//! built for one crashes in the other. Before the first `PMPI_*` call, look
//! for a symbol that only the loaded implementation exports.

use crate::comm::ffi;
use std::ffi::CStr;

/// The implementation this library was built for: `"MPICH"`, `"Open MPI"`
/// (4.x) or `"Open MPI 5"`.
pub fn built_for() -> &'static str {
    // SAFETY: a NUL-terminated constant defined in shim.c.
    unsafe { CStr::from_ptr(ffi::redio_mpi_flavour.as_ptr()) }
        .to_str()
        .unwrap_or("?")
}

/// The implementation loaded in this process, if it can be told.
///
/// Open MPI 5 is told from 4.x by `PMPI_Session_init` (MPI-4 sessions,
/// new in 5.0): both export `ompi_mpi_comm_world`, and their object
/// layouts differ, so a library built for one must not run in the other.
pub fn loaded() -> Option<&'static str> {
    // In the MPI library (also one loaded with RTLD_LOCAL, out of
    // RTLD_DEFAULT's sight: Python's mpi4py).
    let has = |symbol: &CStr| crate::sys::symbols::lookup_mpi(symbol).is_some();
    if has(c"ompi_mpi_comm_world") {
        if has(c"PMPI_Session_init") {
            Some("Open MPI 5")
        } else {
            Some("Open MPI")
        }
    } else if has(c"MPII_Version_string") || has(c"MPIR_Init_thread") {
        Some("MPICH")
    } else {
        None
    }
}

/// The loaded MPI library's description of itself
/// (`MPI_Get_library_version`: name, version and, for MPICH, its device
/// and configuration). MPI allows the call before `MPI_Init`.
pub fn library_version_text() -> String {
    // SAFETY: a constant of shim.c.
    let max = unsafe { ffi::redio_mpi_max_library_version_string };
    let mut buffer = vec![0u8; max.max(0) as usize + 1];
    let mut len = 0;
    // SAFETY: the buffer has MPI_MAX_LIBRARY_VERSION_STRING bytes.
    unsafe { crate::comm::pmpi::PMPI_Get_library_version(buffer.as_mut_ptr().cast(), &mut len) };
    buffer.truncate(len.clamp(0, max) as usize);
    String::from_utf8_lossy(&buffer).into_owned()
}

/// Stops the process with a clear message when the loaded MPI is not the
/// one this library was built for.
pub fn check_or_exit() {
    let built = built_for();
    if let Some(loaded) = loaded() {
        if loaded != built {
            // Leaving at once is the only safe thing: any PMPI call would
            // hand the wrong handle types to the loaded library.
            crate::sys::log::refuse(format_args!(
                "error: this libredio.so was built for {built}, but the program uses {loaded}. \
                 Use the {loaded} build (`redio run --mpi {}` or `redio exec --mpi {}`).",
                cli_name(loaded),
                cli_name(loaded)
            ));
        }
    }
}

fn cli_name(flavour: &str) -> &'static str {
    match flavour {
        "Open MPI" => "openmpi",
        "Open MPI 5" => "openmpi5",
        _ => "mpich",
    }
}
