//! `REDIO_*` environment variables: which names are configuration keys.
//!
//! A variable is a configuration variable exactly when it is named
//! `REDIO_<SECTION>_<KEY>` with `<SECTION>` one of the section names in
//! upper case (`REPLICATION`, `SHARED`, `LOCAL`, `REMAP`, `IO`, `VOTING`,
//! `FAULTS`, `PARITY`, `LOG`). `<KEY>` is the key in upper case, e.g.
//! `REDIO_IO_CHUNK_SIZE` for `io.chunk_size`. Every other `REDIO_*` name
//! (`REDIO_CONFIG`, `REDIO_MPI`, `REDIO_EXTERNAL_RANK`, `REDIO_TEST_*`, …)
//! belongs to other parts of redio and is ignored here, and so are the
//! few names of [`NOT_CONFIGURATION`] that look like keys of a section.

use super::keys::SECTIONS;

/// Variables of other parts of redio whose names start like a section's
/// (`REDIO_PARITY_…`): the parity kernel and progress switches, read by
/// the `redio-parity` crate itself. Without this list `redio run`, `redio
/// info` and every process's start-up refused them as unknown keys.
pub(crate) const NOT_CONFIGURATION: &[&str] = &[
    redio_parity::gf::kernel::KERNEL_ENV,
    redio_parity::progress::INTERVAL_ENV,
];

/// The prefix of every redio environment variable.
pub const ENV_PREFIX: &str = "REDIO_";

/// The variable that names the configuration file.
pub const CONFIG_VAR: &str = "REDIO_CONFIG";

/// The environment variable that sets `section.key`, e.g. `REDIO_LOG_LEVEL`.
pub fn env_var_name(section: &str, key: &str) -> String {
    format!("{ENV_PREFIX}{section}_{key}").to_ascii_uppercase()
}

/// The section a variable name addresses and the rest of the name as a key
/// (lower-cased), or `None` when the variable is not a configuration variable.
pub(crate) fn config_key_of(name: &str) -> Option<(&'static str, String)> {
    if NOT_CONFIGURATION.contains(&name) {
        return None;
    }
    let rest = name.strip_prefix(ENV_PREFIX)?;
    let (section, key) = rest.split_once('_')?;
    let section = SECTIONS
        .iter()
        .map(|(s, _)| *s)
        .find(|s| s.to_ascii_uppercase() == section)?;
    Some((section, key.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            env_var_name("replication", "degree"),
            "REDIO_REPLICATION_DEGREE"
        );
        assert_eq!(env_var_name("io", "chunk_size"), "REDIO_IO_CHUNK_SIZE");
        assert_eq!(
            config_key_of("REDIO_FAULTS_TIMEOUT"),
            Some(("faults", "timeout".to_string()))
        );
        assert_eq!(
            config_key_of("REDIO_REPLICATION_DEGRE"),
            Some(("replication", "degre".to_string()))
        );
    }

    #[test]
    fn variables_of_other_parts_of_redio_are_not_configuration() {
        for name in [
            "REDIO_CONFIG",
            "REDIO_MPI",
            "REDIO_LIB_DIR",
            "REDIO_EXTERNAL_REPLICA",
            "REDIO_EXTERNAL_RANK",
            "REDIO_EXTERNAL_DEGREE",
            "REDIO_OUTPUT",
            "REDIO_LINK",
            "REDIO_RUN_DIR",
            "REDIO_EXEC_PID",
            "REDIO_MPI_LIBRARY",
            "REDIO_OPENMPI5_HOME",
            "REDIO_PYTHON",
            "REDIO_PARITY_KERNEL",
            "REDIO_PARITY_PROGRESS",
            "REDIO_TEST_TIMEOUT",
            "REDIO_BENCH_ITERATIONS",
            "REDIO_REPLICATION",
            "REDIO_replication_degree",
            "HOME",
        ] {
            assert_eq!(config_key_of(name), None, "{name}");
        }
    }
}
