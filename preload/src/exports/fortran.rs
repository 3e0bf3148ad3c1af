//! Open MPI's Fortran entry points of `MPI_INIT` and `MPI_INIT_THREAD`
//! (Open MPI builds only): refused under redundancy, else handed on to
//! Open MPI's own ([`crate::lifecycle::fortran`] says why).
//!
//! Every spelling `libmpi_mpifh` and `libmpi_usempif08` export is covered:
//! lower case with zero, one or two underscores, upper case, and the
//! `mpi_f08` module's `_f08_` names.

use crate::lifecycle::fortran;
use crate::sys::symbols;
use std::ffi::c_int;
use std::sync::atomic::AtomicUsize;

/// Defines one exported Fortran entry point that refuses replicated jobs
/// and otherwise calls the next definition of the same name.
macro_rules! fortran_entry {
    ($name:ident, ($($arg:ident: $ty:ty),*)) => {
        /// Open MPI's Fortran entry point of the same name, refused under
        /// redundancy.
        ///
        /// # Safety
        /// Called from Fortran with the arguments Open MPI's binding takes.
        #[cfg_attr(not(test), no_mangle)]
        #[allow(non_snake_case)] // Open MPI's upper-case spellings
        pub unsafe extern "C" fn $name($($arg: $ty),*) {
            fortran::refuse_if_replicated(stringify!($name));
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let name = concat!(stringify!($name), "\0");
            let cname = std::ffi::CStr::from_bytes_with_nul(name.as_bytes()).unwrap_or_default();
            let address = symbols::resolve(&NEXT, cname);
            // SAFETY: `address` is Open MPI's definition of this very
            // entry point, which takes these arguments.
            let next: unsafe extern "C" fn($($ty),*) =
                unsafe { std::mem::transmute(address) };
            unsafe { next($($arg),*) }
        }
    };
}

fortran_entry!(mpi_init, (ierr: *mut c_int));
fortran_entry!(mpi_init_, (ierr: *mut c_int));
fortran_entry!(mpi_init__, (ierr: *mut c_int));
fortran_entry!(MPI_INIT, (ierr: *mut c_int));
fortran_entry!(mpi_init_f08_, (ierr: *mut c_int));
fortran_entry!(mpi_init_thread, (required: *mut c_int, provided: *mut c_int, ierr: *mut c_int));
fortran_entry!(mpi_init_thread_, (required: *mut c_int, provided: *mut c_int, ierr: *mut c_int));
fortran_entry!(mpi_init_thread__, (required: *mut c_int, provided: *mut c_int, ierr: *mut c_int));
fortran_entry!(MPI_INIT_THREAD, (required: *mut c_int, provided: *mut c_int, ierr: *mut c_int));
fortran_entry!(mpi_init_thread_f08_, (required: *mut c_int, provided: *mut c_int, ierr: *mut c_int));
