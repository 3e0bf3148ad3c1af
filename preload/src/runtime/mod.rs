//! Process-wide runtime state of libredio.so.
//!
//! - [`guard`]: the thread-local "inside MPI" mark;
//! - [`world`]: the replica worlds and `MPI_COMM_WORLD` translation;
//! - [`start`]: what `MPI_Init` adds: configuration broadcast, topology,
//!   communicator split, start-up line;
//! - [`finish`]: what `MPI_Finalize` adds: polled barrier, summary;
//! - [`settings`]: the configuration broadcast at start-up;
//! - [`poll`]: nonblocking, polled waiting with back-off, watching peers;
//! - [`liveness`]: which processes of the job are alive;
//! - [`membership`]: the live replica set and the survivors' agreement;
//! - [`watchdog`]: retiring a replica that lost a process, fatal signals;
//! - [`report`]: events for `redio run`'s outcome;
//! - [`exits`]: this process's start and exit status, for `redio run`;
//! - [`log`]: logging through the raw `write` system call;
//! - [`flavour`]: refusing to run inside the other MPI implementation;
//! - [`handle`]: MPI handles as plain bits, for atomics;
//! - [`symbols`]: finding the real functions with `dlsym(RTLD_NEXT)`;
//! - [`ulfm`]: Open MPI 5's fault-tolerance functions (revoke, shrink, agree).

pub mod exits;
pub mod finish;
pub mod flavour;
pub mod guard;
pub mod handle;
pub mod heartbeat;
pub mod liveness;
pub mod log;
pub mod membership;
pub mod poll;
pub mod rawfs;
pub mod report;
pub mod settings;
pub mod start;
pub mod symbols;
pub mod ulfm;
pub mod ulfm_backend;
pub mod watchdog;
pub mod world;
