//! The job's resolved configuration, as broadcast by world rank 0.

use redio_core::config::Config;
use std::sync::OnceLock;

static CONFIG: OnceLock<Config> = OnceLock::new();

/// Keeps the configuration for the rest of the process (set once, at
/// `MPI_Init`).
pub fn install(config: Config) {
    let _ = CONFIG.set(config);
}

/// The configuration, once `MPI_Init` has run.
pub fn get() -> Option<&'static Config> {
    CONFIG.get()
}
