//! Marks the threads that are inside an MPI call, or inside redio.
//!
//! The MPI library opens hundreds of files during `MPI_Init` and
//! `MPI_Finalize` (hwloc, `/proc`, shared-memory segments). The I/O hooks
//! must pass those through untouched, so every `MPI_*` wrapper holds an
//! [`InsideMpi`] while it runs; the `MPI_File_*` wrappers hold an
//! [`InsideMpiIo`] instead, whose shared-file I/O is coordinated.

use std::cell::Cell;

thread_local! {
    // Const-initialised and without destructor: it stays usable while glibc
    // runs exit handlers after TLS teardown.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// RAII mark: the current thread is inside an MPI call while this lives.
pub struct InsideMpi(());

impl InsideMpi {
    /// Marks the current thread as inside MPI (nesting is allowed).
    #[inline]
    pub fn enter() -> Self {
        DEPTH.with(|d| d.set(d.get() + 1));
        InsideMpi(())
    }

    /// True while the current thread is inside any MPI call.
    #[inline]
    pub fn active() -> bool {
        DEPTH.with(|d| d.get() > 0)
    }
}

impl Drop for InsideMpi {
    #[inline]
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
    }
}

thread_local! {
    // Const-initialised, no destructor (see DEPTH).
    static IO_DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// RAII mark: the current thread is inside an MPI-IO call (`MPI_File_*`).
///
/// Unlike [`InsideMpi`], it lets the library's POSIX calls on shared files
/// be coordinated: under redundancy, ROMIO's and OMPIO's reads and writes
/// are the application's I/O. It also tells path resolution that files the
/// library names for its own bookkeeping (shared-pointer files) belong to
/// this replica alone.
pub struct InsideMpiIo(());

impl InsideMpiIo {
    /// Marks the current thread as inside MPI-IO (nesting is allowed).
    #[inline]
    pub fn enter() -> Self {
        IO_DEPTH.with(|d| d.set(d.get() + 1));
        InsideMpiIo(())
    }

    /// True while the current thread is inside an MPI-IO call.
    #[inline]
    pub fn active() -> bool {
        IO_DEPTH.with(|d| d.get() > 0)
    }
}

impl Drop for InsideMpiIo {
    #[inline]
    fn drop(&mut self) {
        IO_DEPTH.with(|d| d.set(d.get() - 1));
    }
}

/// True while the current thread is inside an MPI call, MPI-IO or not: a
/// `PMPI_*` call made now is the MPI library's own.
#[inline]
pub fn inside_mpi_call() -> bool {
    InsideMpi::active() || InsideMpiIo::active()
}

thread_local! {
    // Const-initialised, no destructor (see DEPTH).
    static IN_REDIO: Cell<bool> = const { Cell::new(false) };
}

/// Proof that the current thread is inside redio: while it lives, every
/// hooked call made by this thread passes through.
pub struct InsideRedio(());

impl InsideRedio {
    /// Marks the thread as inside redio, or `None` when it already is
    /// (a hooked call made by redio itself).
    #[inline]
    pub fn enter() -> Option<Self> {
        if IN_REDIO.with(|flag| flag.replace(true)) {
            None
        } else {
            Some(InsideRedio(()))
        }
    }
}

impl Drop for InsideRedio {
    fn drop(&mut self) {
        IN_REDIO.with(|flag| flag.set(false));
    }
}

/// Runs `f` with the current thread marked as inside redio, so that the
/// C library calls `f` makes (through `std`, say) pass through.
pub fn inside<T>(f: impl FnOnce() -> T) -> T {
    let was = IN_REDIO.with(|flag| flag.replace(true));
    let result = f();
    IN_REDIO.with(|flag| flag.set(was));
    result
}
