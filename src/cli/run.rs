//! `redio run`: start an `N`-rank application as `R` replicas.
//!
//! Builds one launcher line, `mpiexec -n N·R [env] redio exec -- APP …`, so
//! that the preload reaches the application processes only.
//!
//! With replicas, the launcher is told to keep the job alive when a process
//! dies (MPICH: `-disable-auto-cleanup`; Open MPI: `--enable-recovery`),
//! and the outcome is computed from the processes' event files and
//! recorded exit statuses ([`crate::outcome`]), not from the launcher's
//! exit code. While the launcher runs, [`launcher_watch`] watches for deaths
//! during start-up, signals and orphans.

use super::flavour::Flavour;
use super::launcher_watch;
use crate::config::{Config, Layout, Source};
use crate::outcome::{self, Summary};
use crate::output::{self, OutputMode};
use crate::topology::{Topology, DEGREE_RANGE};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The run directory's subdirectory for the launcher's session files
/// ([`super::flavour::launcher_command`]).
const LAUNCHER_SESSION_DIR: &str = "launcher";

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
    /// Write the run's outcome (failures, fail-overs) as JSON to this file.
    /// Without it, a run with failures leaves it in its run directory.
    #[arg(long)]
    pub summary: Option<PathBuf>,
    /// What the job's stdout and stderr show: `once`, each application
    /// line once, whole, from one replica of each logical rank (as a plain
    /// run prints it); `all`, every replica's lines, each prefixed with
    /// `[replica K] `.
    #[arg(long, value_name = "once|all", default_value = "once", value_parser = parse_output)]
    pub output: OutputMode,
    /// What a divergence redio detected but could not correct (replicas
    /// whose data or calls differ with no majority: every replica got
    /// `EIO`) does to a run that otherwise succeeded: `fail`, exit code
    /// 75; `warn`, only reported, exit code 0.
    #[arg(long, value_name = "fail|warn", default_value = "fail", value_parser = parse_on_divergence)]
    pub on_divergence: OnDivergence,
    /// The application and its arguments.
    #[arg(last = true, required = true)]
    pub command: Vec<OsString>,
}

/// `redio run --on-divergence`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnDivergence {
    /// The run fails with [`outcome::EXIT_DIVERGED`].
    Fail,
    /// The divergence is reported, the exit code stays.
    Warn,
}

fn parse_on_divergence(value: &str) -> Result<OnDivergence, String> {
    match value {
        "fail" => Ok(OnDivergence::Fail),
        "warn" => Ok(OnDivergence::Warn),
        _ => Err(format!("`{value}`: expected `fail` or `warn`")),
    }
}

fn parse_output(value: &str) -> Result<OutputMode, String> {
    OutputMode::from_key(value).ok_or_else(|| format!("`{value}`: expected `once` or `all`"))
}

/// Runs `redio run`; returns the exit code [`outcome::judge`] draws: the
/// application's non-zero status, [`outcome::EXIT_RANK_LOST`] when a
/// logical rank did not finish, 128 + signal when the job was killed, else
/// 0 (also after survived failures).
pub fn run(args: RunArgs) -> ExitCode {
    let launch = match launcher_command(&args) {
        Err(message) => {
            eprintln!("redio run: {message}");
            return ExitCode::from(2);
        }
        Ok(launch) => launch,
    };
    let Launch {
        mut command,
        run_dir,
        shape,
    } = launch;
    if args.dry_run {
        let words: Vec<String> = std::iter::once(command.get_program())
            .chain(command.get_args())
            .map(|w| w.to_string_lossy().into_owned())
            .collect();
        println!("{}", words.join(" "));
        return ExitCode::SUCCESS;
    }
    // Before anything is created or launched: a summary that cannot be
    // written is refused now, not after the whole run.
    if let Err(message) = write_provisional_summary(&args) {
        eprintln!("redio run: error: --summary {message}");
        return ExitCode::from(2);
    }
    if let Err(e) = super::scratch::create_dir(&run_dir) {
        eprintln!("redio run: run directory: {e}");
        return ExitCode::from(2);
    }
    launcher_watch::prepare(&mut command);
    let seen = match command.spawn() {
        Ok(child) => launcher_watch::supervise(
            child,
            &launcher_watch::Watch {
                run_dir: &run_dir,
                processes: shape.processes(),
                startup: shape.builtin,
            },
        ),
        // No process ran: the summary (if asked for) says why, and the
        // exit code is the shell's for a command that cannot run.
        Err(e) => outcome::Seen {
            launcher: outcome::LauncherEnd {
                code: Some(127),
                signal: None,
            },
            interrupted: Some(format!("cannot start {:?}: {e}", command.get_program())),
            ..outcome::Seen::default()
        },
    };
    // The launcher's own files (Open MPI 5) tell nothing once it has
    // ended, and a launcher killed early leaves them behind.
    let _ = std::fs::remove_dir_all(run_dir.join(LAUNCHER_SESSION_DIR));
    let place = |w: u32| shape.place(w);
    let mut summary = outcome::judge(
        &outcome::read_run(&run_dir),
        &outcome::Shape {
            ranks: args.ranks,
            processes: shape.processes(),
            place: &place,
        },
        &seen,
    );
    let complete = |rank: u32, replica: u32| {
        summary.processes.iter().any(|p| {
            p.process.rank == rank
                && p.process.replica == replica
                && (p.finished || (p.end == "exit" && !p.started))
        })
    };
    let divergences = output::find_divergences(&run_dir, args.ranks, shape.degree, &complete);
    summary.output_divergences = divergences;
    outcome::judge_divergences(&mut summary, args.on_divergence == OnDivergence::Fail);
    ExitCode::from(conclude(&args, &run_dir, &summary))
}

/// Reports the outcome; returns the exit code ([`outcome::judge`]).
fn conclude(args: &RunArgs, run_dir: &Path, summary: &Summary) -> u8 {
    let code = summary.exit_code;
    let notable = code != 0
        || summary.had_failures()
        || !summary.divergences.is_empty()
        || !summary.output_divergences.is_empty();
    let written = write_summary(args, run_dir, summary, notable);
    if !notable {
        // Nothing to diagnose: with or without `--summary`, the run
        // directory would only pile up in the temporary directory.
        let _ = std::fs::remove_dir_all(run_dir);
        return code;
    }
    if let Some(why) = &summary.interrupted {
        eprintln!("redio run: {why}");
    }
    if summary.had_failures() {
        eprint!(
            "redio run: replica failures during the run:\n{}",
            summary.describe()
        );
    }
    for p in &summary.exited_non_zero {
        eprintln!(
            "redio run: world rank {} (replica {}, rank {}) exited with status {}{}",
            p.process.world_rank,
            p.process.replica,
            p.process.rank,
            p.status.unwrap_or(0),
            if p.finished {
                " after MPI_Finalize"
            } else {
                ""
            }
        );
    }
    report_divergences(summary);
    for divergence in &summary.output_divergences {
        eprintln!(
            "redio run: warning: replicas diverge: {}",
            divergence.describe()
        );
    }
    if let Some(path) = written {
        eprintln!("redio run: summary written to {}", path.display());
    }
    let launcher = match (summary.launcher.code, summary.launcher.signal) {
        (Some(code), _) => format!("launcher exit code {code}"),
        (None, Some(signal)) => format!("launcher killed by signal {signal}"),
        (None, None) => "launcher status unknown".to_string(),
    };
    let list = |ranks: &[u32]| {
        ranks
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !summary.completed {
        if !summary.lost_ranks.is_empty() {
            eprintln!(
                "redio run: error: every replica of logical rank(s) {} failed: the job did not \
                 complete",
                list(&summary.lost_ranks)
            );
        } else if !summary.unfinished_ranks.is_empty() {
            eprintln!(
                "redio run: error: no replica of logical rank(s) {} finished: the job did not \
                 complete",
                list(&summary.unfinished_ranks)
            );
        } else {
            eprintln!("redio run: error: the job did not complete");
        }
    } else if code == 0 && summary.had_failures() {
        eprintln!("redio run: the job completed on the surviving replicas ({launcher} ignored)");
    }
    if code != 0 {
        eprintln!("redio run: exit code {code} ({launcher})");
    }
    code
}

/// Names each uncorrected divergence once (every replica of the rank
/// reported it): an error when it failed the run, else a warning.
fn report_divergences(summary: &Summary) {
    let level = if summary.exit_code == outcome::EXIT_DIVERGED {
        "error"
    } else {
        "warning"
    };
    let mut seen = std::collections::BTreeSet::new();
    for divergence in &summary.divergences {
        if seen.insert((divergence.process.rank, &divergence.report)) {
            eprintln!(
                "redio run: {level}: replicas of rank {} diverged and nothing could correct it \
                 (every replica got EIO): {}",
                divergence.process.rank, divergence.report
            );
        }
    }
}

/// A summary that says the run has not concluded, replaced when it does:
/// if `redio run` is killed, this is what remains.
fn write_provisional_summary(args: &RunArgs) -> Result<(), String> {
    if let Some(path) = &args.summary {
        let json = serde_json::json!({
            "completed": false,
            "interrupted": format!(
                "redio run (process {}) did not conclude: it was killed, or the run is still \
                 going on",
                std::process::id()
            ),
        });
        super::summary_file::write(path, &format!("{json:#}\n"))?;
    }
    Ok(())
}

/// Writes the summary as JSON where asked (or, when anything went wrong,
/// into the run directory); returns the path written.
fn write_summary(
    args: &RunArgs,
    run_dir: &Path,
    summary: &Summary,
    notable: bool,
) -> Option<PathBuf> {
    let path = match &args.summary {
        Some(path) => path.clone(),
        None if notable => run_dir.join("summary.json"),
        None => return None,
    };
    let json = serde_json::to_string_pretty(summary).unwrap_or_default();
    match super::summary_file::write(&path, &(json + "\n")) {
        Ok(()) => Some(path),
        Err(message) => {
            eprintln!("redio run: cannot write the summary {message}");
            None
        }
    }
}

/// The environment every application process gets, as `(name, value)`.
fn job_environment(
    args: &RunArgs,
    flavour: Flavour,
    degree: u32,
    run_dir: &Path,
) -> Result<Vec<(String, String)>, String> {
    let mut env = vec![
        ("REDIO_MPI".to_string(), flavour.key().to_string()),
        ("REDIO_REPLICATION_DEGREE".to_string(), degree.to_string()),
        (
            outcome::ENV_RUN_DIR.to_string(),
            run_dir.display().to_string(),
        ),
        (
            output::ENV_OUTPUT.to_string(),
            args.output.key().to_string(),
        ),
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

/// The launcher command and the run directory its processes report to.
struct Launch {
    command: Command,
    run_dir: PathBuf,
    shape: JobShape,
}

/// The shape of the launched job, for the verdict.
struct JobShape {
    ranks: u32,
    degree: u32,
    /// The replica topology, when `redio run` can compute it (block and
    /// cyclic layouts, a readable map file).
    topology: Option<Topology>,
    /// Built-in replication (not `replication.source: external`).
    builtin: bool,
}

impl JobShape {
    fn processes(&self) -> u32 {
        self.ranks * self.degree
    }

    /// World rank `w`'s place (block layout when the topology is unknown).
    fn place(&self, w: u32) -> outcome::Process {
        let (replica, rank) = match &self.topology {
            Some(topology) => {
                let p = topology.place(w);
                (p.replica, p.rank)
            }
            None => (w / self.ranks.max(1), w % self.ranks.max(1)),
        };
        outcome::Process {
            world_rank: w,
            replica,
            rank,
        }
    }
}

/// The topology the processes will derive: the layout of `--layout`, else
/// of the configuration.
fn topology_of(args: &RunArgs, config: &Config, degree: u32) -> Option<Topology> {
    let processes = args.ranks.checked_mul(degree)?;
    let layout = match args.layout.as_deref() {
        Some("block") => Layout::Block,
        Some("cyclic") => Layout::Cyclic,
        Some("map") => Layout::Map,
        Some(_) => return None,
        None => config.replication.layout,
    };
    let map_text = match layout {
        Layout::Map => std::fs::read_to_string(config.replication.map_file.as_ref()?).ok()?,
        _ => String::new(),
    };
    Topology::of_layout(layout.into(), processes, degree, &map_text).ok()
}

fn launcher_command(args: &RunArgs) -> Result<Launch, String> {
    let flavour = Flavour::resolve(args.mpi)?;
    let config = Config::load_process_env(args.config.as_deref()).map_err(|e| e.to_string())?;
    let degree = args
        .replicas
        .unwrap_or(u32::from(config.replication.degree));
    let survive = config.faults.survive_deaths(degree);
    let run_dir = super::scratch::fresh_temp_path("run");
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

    let env = job_environment(args, flavour, degree, &run_dir)?;
    let session_base = run_dir.join(LAUNCHER_SESSION_DIR);
    let mut command =
        super::flavour::launcher_command(flavour, processes, survive, &env, &session_base)?;
    command.args(&args.launcher_args);
    command
        .arg(redio)
        .arg("exec")
        .arg("--mpi")
        .arg(flavour.key());
    if survive {
        command.arg("--survive");
    }
    command.arg("--").args(&args.command);
    let shape = JobShape {
        ranks: args.ranks,
        degree,
        topology: topology_of(args, &config, degree),
        builtin: config.replication.source == Source::Builtin,
    };
    Ok(Launch {
        command,
        run_dir,
        shape,
    })
}
