//! The `redio` command: launch replicated MPI jobs, check configurations,
//! and tell how paths are classified. See `redio --help`.

use clap::{Parser, Subcommand};
use redio::cli;
use std::path::PathBuf;
use std::process::ExitCode;

/// File I/O under redundant execution of MPI programs.
#[derive(Parser)]
#[command(name = "redio", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start an MPI job of N ranks as R replicas (N·R processes).
    Run(cli::run::RunArgs),
    /// Set the preload and environment, then exec APP (for your own
    /// `mpiexec`/`mpirun`/`srun` lines).
    Exec(cli::exec::ExecArgs),
    /// Check or show the configuration.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Tell how redio classifies each path (shared or local, file system).
    Info {
        /// Paths to classify.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Measure the protocols on a directory (the paper's micro-benchmark):
    /// CSV, JSON, a Markdown table and, with --plot, PNG figures.
    Bench(Box<cli::bench::BenchArgs>),
    /// Join the part files that Distributed Separate Write left beside
    /// each PATH into PATH itself.
    Join {
        /// Keep the bytes of an existing final file past the last piece
        /// (a job that joined in place before it stopped wrote them);
        /// by default the joined file ends at the last piece.
        #[arg(long)]
        keep_tail: bool,
        /// Final files whose parts to join.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Redundancy data across ranks: inspect, verify, rebuild, encode.
    #[command(subcommand)]
    Parity(cli::parity::ParityCommand),
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Print every problem of FILE as `file:line:col: message`.
    Check {
        /// The YAML file to check.
        file: PathBuf,
    },
    /// Print the resolved configuration (environment > file > defaults).
    Show {
        /// Configuration file (default: $REDIO_CONFIG).
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Run(args) => cli::run::run(args),
        Command::Exec(args) => cli::exec::exec(args),
        Command::Config(ConfigCommand::Check { file }) => cli::config_cmd::check(&file),
        Command::Config(ConfigCommand::Show { config }) => cli::config_cmd::show(config.as_deref()),
        Command::Info { paths } => cli::info::info(&paths),
        Command::Join { paths, keep_tail } => cli::join::run(
            &paths,
            if keep_tail {
                redio::join::Tail::Keep
            } else {
                redio::join::Tail::Drop
            },
        ),
        Command::Bench(args) => cli::bench::bench(*args),
        Command::Parity(cmd) => cli::parity::run(cmd),
    }
}
