//! `redio config check FILE` and `redio config show [--config FILE]`.
//!
//! `check` validates one file on its own and prints every problem as
//! `file:line:col: message` (one per line, on stderr), or `FILE: ok`.
//! `show` prints the configuration redio would use, after the environment,
//! the file and the defaults are combined, as YAML that is itself a valid
//! configuration file.

use crate::config::{check_file, Config};
use std::path::Path;
use std::process::ExitCode;

/// Checks the configuration file at `path`.
///
/// Exit status 0 when it is valid, 1 when it has problems or cannot be read.
/// `${VAR}` references are resolved from the environment; `REDIO_*`
/// variables are not applied (the file is checked as written).
pub fn check(path: &Path) -> ExitCode {
    let diagnostics = check_file(path);
    if diagnostics.is_empty() {
        println!("{}: ok", path.display());
        return ExitCode::SUCCESS;
    }
    for diagnostic in &diagnostics {
        eprintln!("{diagnostic}");
    }
    ExitCode::FAILURE
}

/// Prints the resolved configuration as YAML on stdout.
///
/// The file is `explicit` (`--config`), else `$REDIO_CONFIG`, else none;
/// `REDIO_*` variables of the process override it, and misspelled ones are
/// errors. On error, every problem goes to stderr and the exit status is 1.
pub fn show(explicit: Option<&Path>) -> ExitCode {
    match Config::load_process_env(explicit) {
        Ok(config) => {
            print!("{}", config.to_yaml());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}
