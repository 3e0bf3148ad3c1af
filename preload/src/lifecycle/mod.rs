//! Layer `lifecycle`: what `MPI_Init` and `MPI_Finalize` add, and the only
//! caller of the start and stop of coordination, fault tolerance and parity.
//!
//! Rule: imports `io` and below; never `exports`.
//!
//! - [`start`]: configuration broadcast, topology, communicator split,
//!   start-up line;
//! - [`finish`]: polled barrier, summary, leaving after a failure;
//! - [`barrier`]: the application's `MPI_Barrier`;
//! - [`files`]: turning the coordination of shared files on and off.

pub mod barrier;
pub mod files;
pub mod finish;
pub mod start;
