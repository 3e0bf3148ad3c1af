//! The subcommands of the `redio` CLI, one module each.

pub mod bench;
pub mod config_cmd;
pub mod exec;
pub mod exec_life;
pub mod flavour;
pub mod info;
pub mod join;
pub mod launcher_watch;
pub mod output;
pub mod parity;
mod parity_ranks;
mod parity_startup;
pub mod parity_workers;
pub mod progress_bar;
pub mod run;
pub mod scratch;
pub mod summary_file;
pub mod supervise;
