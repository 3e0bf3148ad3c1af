//! Finds the functions redio forwards to, at run time.
//!
//! The C library's real `open`, `read`, … are looked up with
//! `dlsym(RTLD_NEXT, …)`: the next definition after libredio.so in the
//! process's search order ([`resolve`]).
//!
//! The MPI library's `PMPI_*` functions (and the other symbols redio needs
//! from it) are looked up in *one* library, the one that defines
//! `PMPI_Init` ([`resolve_mpi`], [`lookup_mpi`]), found once:
//!
//! 1. `dlsym(RTLD_NEXT, "PMPI_Init")`: a program linked with MPI has it in
//!    the global scope, after libredio.so;
//! 2. otherwise every loaded object in load order (`dl_iterate_phdr`),
//!    opened again with `dlopen(RTLD_NOLOAD)` (which loads nothing) and
//!    asked with `dlsym(handle, …)`. This finds an MPI library loaded with
//!    `dlopen(RTLD_LOCAL)`, out of `RTLD_NEXT`'s sight: Python loads
//!    mpi4py's extension module that way, and libmpi with it.
//!
//! Every `PMPI_*` then comes from that library's handle, so no stub can
//! bind to a different MPI than the others.

use crate::sys::log;
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Returns the address of `name` in the libraries loaded after this one,
/// caching it in `slot`.
///
/// A missing function means the program uses a library without it: nothing
/// sensible can follow, so the process stops with the name.
#[inline]
pub fn resolve(slot: &AtomicUsize, name: &CStr) -> usize {
    match slot.load(Ordering::Relaxed) {
        0 => {
            // SAFETY: dlsym with a valid NUL-terminated name.
            let address = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) } as usize;
            if address == 0 {
                log::refuse(format_args!(
                    "error: {} is not in the libraries this program loaded",
                    name.to_string_lossy()
                ));
            }
            slot.store(address, Ordering::Relaxed);
            address
        }
        address => address,
    }
}

/// Looks `name` up now and caches it in `slot`; a missing name is left for
/// [`resolve`] to report if it is ever called.
pub fn try_resolve(slot: &AtomicUsize, name: &CStr) {
    if slot.load(Ordering::Relaxed) == 0 {
        // SAFETY: dlsym with a valid NUL-terminated name.
        let address = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) } as usize;
        slot.store(address, Ordering::Relaxed);
    }
}

/// Returns the address of `name` in the MPI library, caching it in `slot`.
///
/// Stops the process with a remedy when no loaded library defines
/// `PMPI_Init`, or when the MPI library lacks `name`.
#[inline]
pub fn resolve_mpi(slot: &AtomicUsize, name: &CStr) -> usize {
    match slot.load(Ordering::Relaxed) {
        0 => {
            let Some(library) = mpi_library() else {
                log::refuse(format_args!(
                    "error: {}: no library loaded in this process defines PMPI_Init, so redio \
                     cannot reach MPI. The program must load the MPI library this libredio.so \
                     was built for before its first MPI call: link it with that MPI (its \
                     mpicc), or use a module built against it (mpi4py of that MPI, \
                     `redio run --mpi …` to pick the matching build). A program that loads \
                     MPI in some other way can preload it too: \
                     LD_PRELOAD=\"libredio.so /path/to/libmpi.so\"",
                    name.to_string_lossy()
                ));
            };
            // SAFETY: a handle from dlopen and a valid NUL-terminated name.
            let address = unsafe { libc::dlsym(library.handle as *mut c_void, name.as_ptr()) };
            if address.is_null() {
                log::refuse(format_args!(
                    "error: {} is not in {}, the MPI library this program loaded (an MPI \
                     without this function, or not the one this libredio.so was built for: \
                     use the matching build, `redio run --mpi mpich|openmpi|openmpi5`)",
                    name.to_string_lossy(),
                    library.path.to_string_lossy()
                ));
            }
            slot.store(address as usize, Ordering::Relaxed);
            address as usize
        }
        address => address,
    }
}

/// The address of `name` in the MPI library (a function or an object), or
/// `None` when no MPI library is loaded or it has no such symbol.
pub fn lookup_mpi(name: &CStr) -> Option<usize> {
    let library = mpi_library()?;
    // SAFETY: a handle from dlopen and a valid NUL-terminated name.
    let address = unsafe { libc::dlsym(library.handle as *mut c_void, name.as_ptr()) };
    (!address.is_null()).then_some(address as usize)
}

/// [`lookup_mpi`] for C: the address of `name` in the MPI library, or NULL.
///
/// # Safety
/// `name` is a NUL-terminated string.
pub unsafe extern "C" fn lookup_mpi_c(name: *const c_char) -> *mut c_void {
    lookup_mpi(CStr::from_ptr(name)).unwrap_or(0) as *mut c_void
}

/// The address of `name` in any loaded object, or `None`: first the global
/// scope, then each object in load order (also one loaded with
/// `dlopen(RTLD_LOCAL)`, such as an MPI library's components and their
/// dependencies, which Open MPI 4.1 loads that way).
pub fn lookup_loaded(name: &CStr) -> Option<usize> {
    // SAFETY: dlsym with a valid NUL-terminated name.
    let global = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if !global.is_null() {
        return Some(global as usize);
    }
    loaded_objects().into_iter().find_map(|path| {
        let library = open_loaded(&path)?;
        // SAFETY: a handle from dlopen and a valid NUL-terminated name.
        let address = unsafe { libc::dlsym(library.handle as *mut c_void, name.as_ptr()) };
        // SAFETY: the reference open_loaded took; a found object stays
        // loaded (the MPI library holds its own reference).
        unsafe { libc::dlclose(library.handle as *mut c_void) };
        (!address.is_null()).then_some(address as usize)
    })
}

/// How many objects are loaded now: a lookup that found nothing is worth
/// repeating only once this changed.
pub fn loaded_object_count() -> usize {
    unsafe extern "C" fn count(
        _info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> libc::c_int {
        *(data as *mut usize) += 1;
        0
    }
    let mut objects = 0usize;
    // SAFETY: the callback only increments `objects`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(count), (&mut objects as *mut usize).cast()) };
    objects
}

/// The path of the MPI library in use, once found.
pub fn mpi_library_path() -> Option<String> {
    mpi_library().map(|l| l.path.to_string_lossy().into_owned())
}

/// The loaded MPI library: a `dlopen` handle and its path.
struct Library {
    handle: usize,
    path: CString,
}

/// The symbol that tells an MPI library: every implementation defines it.
const ANCHOR: &CStr = c"PMPI_Init";

/// The MPI library, found on the first call that finds one (a process
/// that has not loaded it yet may load it later: not cached until found).
fn mpi_library() -> Option<&'static Library> {
    static LIBRARY: OnceLock<Library> = OnceLock::new();
    if let Some(library) = LIBRARY.get() {
        return Some(library);
    }
    let found = find_mpi_library()?;
    // A concurrent first call may have won; both found the same object.
    Some(LIBRARY.get_or_init(|| found))
}

fn find_mpi_library() -> Option<Library> {
    // SAFETY: dlsym with a valid NUL-terminated name.
    let next = unsafe { libc::dlsym(libc::RTLD_NEXT, ANCHOR.as_ptr()) };
    if !next.is_null() {
        if let Some(path) = object_of(next) {
            if let Some(library) = open_loaded(&path) {
                return Some(library);
            }
        }
    }
    // libredio.so itself defines PMPI_Init (the entries of
    // exports::fortran): taken for the MPI library, every stub would
    // call redio's own entry, which calls the stub again, for good.
    let this_library = object_of(find_mpi_library as *mut c_void);
    loaded_objects()
        .into_iter()
        .filter(|path| Some(path) != this_library.as_ref())
        .find_map(|path| defines_anchor(&path))
}

/// The path of the object that defines `address`.
fn object_of(address: *mut c_void) -> Option<CString> {
    // SAFETY: an all-zero Dl_info is a valid value for dladdr to fill.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address.
    if unsafe { libc::dladdr(address, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dladdr returned a NUL-terminated name owned by the loader.
    let path = unsafe { CStr::from_ptr(info.dli_fname) };
    (!path.is_empty()).then(|| path.to_owned())
}

/// A handle of the already loaded object `path` (loads nothing).
fn open_loaded(path: &CStr) -> Option<Library> {
    // SAFETY: a NUL-terminated path; RTLD_NOLOAD only returns a handle of
    // an object that is loaded already (the reference is kept for good).
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
    (!handle.is_null()).then(|| Library {
        handle: handle as usize,
        path: path.to_owned(),
    })
}

/// The loaded object `path` as the MPI library, if it defines `PMPI_Init`
/// itself (not through one of its dependencies).
fn defines_anchor(path: &CStr) -> Option<Library> {
    let library = open_loaded(path)?;
    // SAFETY: a handle from dlopen and a valid NUL-terminated name.
    let address = unsafe { libc::dlsym(library.handle as *mut c_void, ANCHOR.as_ptr()) };
    if !address.is_null() && object_of(address).as_deref() == Some(path) {
        return Some(library);
    }
    // SAFETY: the reference open_loaded took.
    unsafe { libc::dlclose(library.handle as *mut c_void) };
    None
}

/// The paths of the loaded objects, in load order (the program itself,
/// which has no name, left out).
fn loaded_objects() -> Vec<CString> {
    unsafe extern "C" fn collect(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> libc::c_int {
        let names = &mut *(data as *mut Vec<CString>);
        let name = (*info).dlpi_name;
        if !name.is_null() {
            let name = CStr::from_ptr(name);
            if !name.is_empty() {
                names.push(name.to_owned());
            }
        }
        0
    }
    let mut names: Vec<CString> = Vec::new();
    // SAFETY: the callback only reads the loader's entries and pushes into
    // `names`, which outlives the call. No dlopen runs under the loader's
    // lock: the objects are opened after the walk.
    unsafe { libc::dl_iterate_phdr(Some(collect), (&mut names as *mut Vec<CString>).cast()) };
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The MPI library as Python loads it with mpi4py: `dlopen(RTLD_LOCAL)`
    /// after start-up, out of `RTLD_NEXT`'s and `RTLD_DEFAULT`'s sight.
    #[test]
    fn an_mpi_library_loaded_with_rtld_local_is_found_and_every_function_comes_from_it() {
        let soname = if cfg!(redio_mpi = "mpich") {
            c"libmpich.so.12"
        } else if cfg!(redio_mpi = "openmpi") {
            c"libmpi.so.40"
        } else {
            // Open MPI 5 lives in its own prefix, not in the loader's cache.
            return;
        };
        // SAFETY: dlsym with a valid NUL-terminated name.
        let global = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"PMPI_Init".as_ptr()) };
        assert!(global.is_null(), "this test binary must not link MPI");
        assert_eq!(lookup_mpi(c"PMPI_Init"), None, "nothing loaded yet");
        // SAFETY: a NUL-terminated name; the library stays loaded.
        let handle = unsafe { libc::dlopen(soname.as_ptr(), libc::RTLD_LOCAL | libc::RTLD_LAZY) };
        assert!(
            !handle.is_null(),
            "{soname:?} not found (scripts/setup.sh installs it)"
        );
        // SAFETY: as above.
        let global = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"PMPI_Init".as_ptr()) };
        assert!(
            global.is_null(),
            "RTLD_LOCAL keeps it out of the global scope"
        );
        // SAFETY: a handle from dlopen and a NUL-terminated name.
        let init = unsafe { libc::dlsym(handle, c"PMPI_Init".as_ptr()) } as usize;
        assert_eq!(lookup_mpi(c"PMPI_Init"), Some(init));
        let path = mpi_library_path().unwrap();
        for name in [c"PMPI_Comm_rank", c"PMPI_Allreduce", c"PMPI_File_open"] {
            let slot = AtomicUsize::new(0);
            let address = resolve_mpi(&slot, name);
            let from = object_of(address as *mut c_void).unwrap();
            assert_eq!(
                from.to_string_lossy(),
                path,
                "{name:?} from another library"
            );
        }
    }
}
