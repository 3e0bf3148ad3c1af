//! `redio run`: start an `N`-rank application as `R` replicas.
//!
//! Builds one launcher line, `mpiexec -n N·R [env] redio exec -- APP …`, so
//! that the preload reaches the application processes only.

use super::mpi::Flavour;
use crate::config::Config;
use crate::topology::DEGREE_RANGE;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// Arguments of `redio run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// Logical ranks of the application (N).
    #[arg(short = 'n', long = "ranks")]
    pub ranks: u32,
    /// Degree of redundancy R, 1 to 3 (default: from the configuration).
    #[arg(short = 'r', long = "replicas")]
    pub replicas: Option<u32>,
    /// Replica layout: block, cyclic or map (default: from the configuration).
    #[arg(long)]
    pub layout: Option<String>,
    /// Configuration file (default: $REDIO_CONFIG).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// MPI implementation to launch with (default: $REDIO_MPI, else mpich).
    #[arg(long, value_enum)]
    pub mpi: Option<Flavour>,
    /// Extra argument for the launcher, before the application (repeatable).
    #[arg(long = "launcher-arg", allow_hyphen_values = true)]
    pub launcher_args: Vec<OsString>,
    /// Print the launcher line instead of running it.
    #[arg(long)]
    pub dry_run: bool,
    /// The application and its arguments.
    #[arg(last = true, required = true)]
    pub command: Vec<OsString>,
}

/// Runs `redio run` and returns the launcher's exit status.
pub fn run(args: RunArgs) -> ExitCode {
    match launcher_command(&args) {
        Err(message) => {
            eprintln!("redio run: {message}");
            ExitCode::from(2)
        }
        Ok(command) if args.dry_run => {
            let words: Vec<String> = std::iter::once(command.get_program())
                .chain(command.get_args())
                .map(|w| w.to_string_lossy().into_owned())
                .collect();
            println!("{}", words.join(" "));
            ExitCode::SUCCESS
        }
        Ok(mut command) => match command.status() {
            Ok(status) => ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8),
            Err(e) => {
                eprintln!("redio run: cannot start {:?}: {e}", command.get_program());
                ExitCode::from(127)
            }
        },
    }
}

/// The environment every application process gets, as `(name, value)`.
fn job_environment(
    args: &RunArgs,
    flavour: Flavour,
    degree: u32,
) -> Result<Vec<(String, String)>, String> {
    let mut env = vec![
        ("REDIO_MPI".to_string(), flavour.key().to_string()),
        ("REDIO_REPLICATION_DEGREE".to_string(), degree.to_string()),
    ];
    if let Some(layout) = &args.layout {
        env.push(("REDIO_REPLICATION_LAYOUT".into(), layout.clone()));
    }
    if let Some(config) = &args.config {
        let absolute = config
            .canonicalize()
            .map_err(|e| format!("configuration file {}: {e}", config.display()))?;
        env.push(("REDIO_CONFIG".into(), absolute.display().to_string()));
    }
    Ok(env)
}

fn launcher_command(args: &RunArgs) -> Result<Command, String> {
    let flavour = Flavour::resolve(args.mpi)?;
    let degree = match args.replicas {
        Some(degree) => degree,
        None => {
            let config =
                Config::load_process_env(args.config.as_deref()).map_err(|e| e.to_string())?;
            u32::from(config.replication.degree)
        }
    };
    if !DEGREE_RANGE.contains(&degree) {
        return Err(format!(
            "-r {degree}: the degree of redundancy must be between {} and {}",
            DEGREE_RANGE.start(),
            DEGREE_RANGE.end()
        ));
    }
    if args.ranks == 0 {
        return Err("-n 0: the application needs at least one rank".into());
    }
    let processes = args.ranks.checked_mul(degree).ok_or("too many processes")?;
    let redio =
        std::env::current_exe().map_err(|e| format!("cannot find the redio executable: {e}"))?;

    let mut command = Command::new(flavour.launcher()?);
    command.arg("-n").arg(processes.to_string());
    let env = job_environment(args, flavour, degree)?;
    match flavour {
        Flavour::Mpich => {
            for (name, value) in &env {
                command.arg("-genv").arg(name).arg(value);
            }
        }
        Flavour::Openmpi => {
            // Open MPI refuses more processes than cores, and root, unless told.
            command.arg("--oversubscribe");
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } == 0 {
                command.arg("--allow-run-as-root");
            }
            for (name, value) in &env {
                command.arg("-x").arg(format!("{name}={value}"));
            }
        }
        // (ulfm branch) Open MPI 5: ULFM and its failure detector on.
        Flavour::Openmpi5 => {
            command.args(super::mpi::OPENMPI5_FT_ARGS);
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } == 0 {
                command.arg("--allow-run-as-root");
            }
            for (name, value) in &env {
                command.arg("-x").arg(format!("{name}={value}"));
            }
        }
    }
    command.args(&args.launcher_args);
    command
        .arg(redio)
        .arg("exec")
        .arg("--mpi")
        .arg(flavour.key())
        .arg("--")
        .args(&args.command);
    Ok(command)
}
