//! Layer `ft` (fault tolerance): which processes are alive, the live
//! replica set, retiring a replica that lost a process, ULFM.
//!
//! Rule: imports `state`, `comm` and `sys`; never `parity` or anything above.
//! It installs the watcher the polled waits of `comm` consult ([`watch`]).
//!
//! - [`liveness`]: which processes of the job are alive;
//! - [`heartbeat`]: cross-node liveness through beat files;
//! - [`membership`]: the live replica set and the survivors' agreement;
//! - [`spares`]: the survivors' communicators, built while all are alive;
//! - [`watchdog`]: retiring a replica that lost a process, fatal signals;
//! - [`ulfm`]: the ULFM back-end (Open MPI 5 reports dead peers itself);
//! - [`watch`]: what a polled wait asks fault tolerance;
//! - [`ulfm_probe`]: a test hook showing what ULFM reports.

pub mod heartbeat;
pub mod liveness;
pub mod membership;
pub mod spares;
pub mod ulfm;
pub mod ulfm_probe;
pub mod watch;
pub mod watchdog;
