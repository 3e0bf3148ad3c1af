//! The subcommands of the `redio` CLI, one module each.

pub mod bench;
pub mod config_cmd;
pub mod exec;
pub mod info;
pub mod join;
pub mod launcher_watch;
pub mod mpi;
pub mod parity;
pub mod parity_job;
pub mod progress_bar;
pub mod run;
pub mod supervise;
