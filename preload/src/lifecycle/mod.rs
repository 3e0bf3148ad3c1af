//! Layer `lifecycle`: what `MPI_Init` and `MPI_Finalize` add, and the only
//! caller of the start and stop of coordination, fault tolerance and parity.
//!
//! Rule: imports `io` and below; never `exports`.
//!
//! - [`start`]: configuration broadcast, topology, communicator split,
//!   start-up line;
//! - [`finish`]: polled barrier, summary, leaving after a failure;
//! - [`parity_at_finalize`]: lazy parity at `MPI_Finalize`, by every
//!   replica that lost no process;
//! - [`barrier`]: the application's `MPI_Barrier`;
//! - [`external`]: external mode through the C API;
//! - [`parity_worker`]: the collective `redio parity` job's MPI life;
//! - [`files`]: turning the coordination of shared files on and off.

pub mod barrier;
pub mod external;
pub mod files;
pub mod finish;
pub mod parity_at_finalize;
pub mod parity_worker;
pub mod start;
