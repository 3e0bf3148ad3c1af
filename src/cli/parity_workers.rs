//! The collective `redio parity encode | verify | rebuild`: an MPI job of
//! one process per logical rank, each on its own root directory.
//!
//! The CLI is not linked with MPI; libredio.so is. [`launch`] starts
//! `mpiexec -n N redio parity worker -- KEY=VALUE…` through the launcher
//! code `redio run` uses, with `LD_PRELOAD` set (for the workers only) to
//! libredio.so and then the flavour's MPI library, so that libredio finds
//! `PMPI_*` after itself exactly as in an application. Each [`worker`]
//! looks up `redio_parity_job` (exported by the preload) and calls it; rank
//! 0 prints the report and a final `redio-parity-exit: N` line, which
//! [`launch`] turns into its exit code (a non-zero exit of a rank would make
//! the launchers print alarms of their own).

use super::flavour::{self, Flavour};
use super::parity::{Offline, EXIT_ERROR};
use super::parity_startup::startup_env;
use redio_parity::worker_args::{JobSpec, Operation};
use std::ffi::{c_char, c_int, CString};
use std::io::{BufRead, BufReader};
use std::process::{ExitCode, Stdio};

/// The line rank 0 ends its report with.
const EXIT_MARKER: &str = "redio-parity-exit: ";

fn fail(op: &str, e: impl std::fmt::Display) -> ExitCode {
    eprintln!("redio parity {op}: {e}");
    ExitCode::from(EXIT_ERROR)
}

/// The job's spec and its rank count.
fn spec_of(
    op: Operation,
    place: &Offline,
    encode: Option<(String, usize, String)>,
) -> Result<(JobSpec, u32), String> {
    let roots: Vec<String> = match &place.root {
        Some(t) => vec![t.clone()],
        None => {
            let here = std::env::current_dir().map_err(|e| e.to_string())?;
            // Absolute: the workers may start in another directory.
            place
                .dirs
                .iter()
                .map(|d| here.join(d).display().to_string())
                .collect()
        }
    };
    if place.root.is_none() {
        redio_parity::assess::refuse_repeated_dirs(&place.dirs).map_err(|e| e.to_string())?;
    }
    let ranks = match (place.ranks, roots.len()) {
        (Some(n), _) => n,
        (None, n) if n > 1 => n as u32,
        _ => {
            return Err(
                "give the number of logical ranks with -n N (the MPI job), or \
                        --offline to work in this process on files gathered in one place"
                    .into(),
            )
        }
    };
    if ranks == 0 {
        return Err("-n 0: at least one rank is needed".into());
    }
    if roots.len() > 1 && roots.len() != ranks as usize {
        return Err(format!(
            "{} directories for {ranks} ranks: give one per logical rank, or --root with {{rank}}",
            roots.len()
        ));
    }
    if op == Operation::Encode
        && ranks > 1
        && roots.len() == 1
        && !roots[0].contains(redio_parity::worker_args::RANK_PLACEHOLDER)
    {
        // Encode protects every file under a root: a shared one would make
        // every rank protect every other rank's files.
        return Err(format!(
            "encode needs one root per rank: put {{rank}} in --root, or give {ranks} directories"
        ));
    }
    let (scheme, set_size, group) = encode.unwrap_or(("xor".into(), 8, String::new()));
    let parity_dir = match &place.parity_dir {
        // Absolute: the workers may start in another directory.
        Some(d) => std::env::current_dir()
            .map_err(|e| e.to_string())?
            .join(d)
            .display()
            .to_string(),
        None => String::new(),
    };
    let spec = JobSpec {
        op,
        roots,
        prefix: place.prefix.clone(),
        piece: place.piece.max(1),
        scheme,
        set_size,
        group,
        parity_dir,
    };
    let local = place.launcher_args.is_empty();
    super::parity_ranks::check(&spec, ranks, op != Operation::Encode, local)?;
    Ok((spec, ranks))
}

/// Runs `op` as an MPI job and returns rank 0's verdict as the exit code:
/// verify 0 healthy, 1 repairable, 2 unrecoverable; rebuild 0 repaired or
/// healthy, 2 unrecoverable (nothing written); encode 0; 3 error.
pub fn launch(op: Operation, place: &Offline, encode: Option<(String, usize, String)>) -> ExitCode {
    let name = op.name();
    let flavour = match Flavour::resolve(place.mpi) {
        Ok(f) => f,
        Err(e) => return fail(name, e),
    };
    let (spec, ranks) = match spec_of(op, place, encode) {
        Ok(x) => x,
        Err(e) => return fail(name, e),
    };
    // Open MPI 5's launcher session files, removed with the guard.
    let session_base = match super::scratch::Scratch::create("parity") {
        Ok(dir) => dir,
        Err(e) => return fail(name, e),
    };
    let prepared = (|| -> Result<std::process::Command, String> {
        let preload = format!(
            "{} {}",
            flavour::find_library(flavour)?.display(),
            flavour::mpi_library(flavour)?
        );
        let mut env = vec![
            ("LD_PRELOAD".to_string(), preload),
            ("REDIO_MPI".to_string(), flavour.key().to_string()),
        ];
        let startup = startup_env();
        env.extend(startup.iter().cloned());
        let mut command =
            flavour::launcher_command(flavour, ranks, false, &env, session_base.path())?;
        command.envs(startup);
        let redio = std::env::current_exe().map_err(|e| format!("the redio executable: {e}"))?;
        command
            .args(&place.launcher_args)
            .arg(redio)
            .args(["parity", "worker", "--"])
            .args(spec.to_args());
        Ok(command)
    })();
    let mut command = match prepared {
        Ok(c) => c,
        Err(e) => return fail(name, e),
    };
    let mut child = match command.stdout(Stdio::piped()).spawn() {
        Ok(c) => c,
        Err(e) => {
            return fail(
                name,
                format!("cannot start {:?}: {e}", command.get_program()),
            )
        }
    };
    let mut code = None;
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            match line.strip_prefix(EXIT_MARKER) {
                Some(c) => code = c.trim().parse::<u8>().ok(),
                None => println!("{line}"),
            }
        }
    }
    let status = child.wait();
    match code {
        Some(c) => ExitCode::from(c),
        None => fail(
            name,
            format!(
                "the MPI job ended without a verdict (launcher: {}); nothing was renamed into \
                 place unless reported above",
                status.map_or_else(|e| e.to_string(), |s| s.to_string())
            ),
        ),
    }
}

/// The entry point libredio.so exports for the worker.
type JobEntry = unsafe extern "C" fn(c_int, *const *const c_char) -> c_int;

/// One MPI process of the collective job: calls the preload's
/// `redio_parity_job` with `args`. Exits 0 once the job ran (rank 0 has
/// printed the verdict), 3 if it could not run.
pub fn worker(args: &[String]) -> ExitCode {
    // SAFETY: a NUL-terminated name; RTLD_DEFAULT searches the preloads.
    let entry = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"redio_parity_job".as_ptr()) };
    if entry.is_null() {
        return fail(
            "worker",
            "libredio.so is not loaded (the worker is started by `redio parity` with LD_PRELOAD)",
        );
    }
    // SAFETY: the preload exports this symbol with exactly this signature.
    let entry: JobEntry = unsafe { std::mem::transmute::<*mut libc::c_void, JobEntry>(entry) };
    let owned: Vec<CString> = args
        .iter()
        .filter_map(|a| CString::new(a.as_str()).ok())
        .collect();
    let ptrs: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
    // SAFETY: `ptrs` holds `owned.len()` valid strings that outlive the call.
    let rc = unsafe { entry(ptrs.len() as c_int, ptrs.as_ptr()) };
    if rc < 0 {
        return fail("worker", "MPI_Init failed");
    }
    ExitCode::SUCCESS
}
