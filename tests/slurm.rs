//! redio under a real Slurm (issue 46): `scripts/slurm.sh` starts munged,
//! slurmctld and two slurmd emulating nodes n1 and n2 on this machine, and
//! the tests submit real batch jobs with `sbatch --wait`, then read the
//! job's state with `scontrol`. No mock of Slurm.
//!
//! Each test runs `io_failover` (tests/programs/io) as 2 ranks x 2
//! replicas with `redio run` inside a batch job: once fault-free on one
//! node, once on two nodes with a replica SIGKILLed in the middle of a
//! write. The second job must end COMPLETED with exit code 0 and leave the
//! same shared files as the first.

mod common;

use common::{compile_flavour, files, fresh_dir, launch_lock, redio_bin, repo, Flavour, Mpi};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Bound on one batch job, from submission to its end (start-up of 4
/// processes under load is a few seconds; the controller notices the end
/// within a few more).
const JOB_SECONDS: u32 = 240;

/// Starts the emulated cluster once per test binary; returns SLURM_CONF.
fn slurm_conf() -> &'static Path {
    static CONF: OnceLock<PathBuf> = OnceLock::new();
    CONF.get_or_init(|| {
        let out = Command::new(repo().join("scripts/slurm.sh"))
            .arg("start")
            .output()
            .expect("run scripts/slurm.sh");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "scripts/slurm.sh start failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let conf = stdout
            .lines()
            .find_map(|l| l.strip_prefix("export SLURM_CONF="))
            .unwrap_or_else(|| panic!("no SLURM_CONF in: {stdout}"));
        PathBuf::from(conf)
    })
}

/// One batch job's outcome.
struct BatchJob {
    /// `sbatch --wait`'s exit code: the job's.
    code: Option<i32>,
    /// `scontrol show job`'s fields.
    fields: BTreeMap<String, String>,
    /// The job's output file.
    output: String,
}

/// Submits `script` with `sbatch --wait` on `nodes` nodes and 4 tasks, and
/// reads the job's record.
fn sbatch(dir: &Path, script: &str, nodes: u32) -> BatchJob {
    let conf = slurm_conf();
    let path = dir.join("job.sh");
    std::fs::write(&path, script).unwrap();
    let output = dir.join("job.out");
    let out = Command::new("timeout")
        .arg(JOB_SECONDS.to_string())
        .args(["sbatch", "--parsable", "--wait", "-n", "4", "-N"])
        .arg(nodes.to_string())
        .arg("-o")
        .arg(&output)
        .arg(&path)
        .env("SLURM_CONF", conf)
        .current_dir(dir)
        .output()
        .expect("run sbatch");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let job_output = std::fs::read_to_string(&output).unwrap_or_default();
    assert_ne!(
        out.status.code(),
        Some(124),
        "the batch job did not end within {JOB_SECONDS} s; its output:\n{job_output}"
    );
    let id = stdout
        .lines()
        .next()
        .and_then(|l| l.split(';').next())
        .unwrap_or_else(|| panic!("sbatch printed no job id: {stdout} {:?}", out.stderr))
        .trim()
        .to_string();
    let show = Command::new("scontrol")
        .args(["show", "job", &id])
        .env("SLURM_CONF", conf)
        .output()
        .expect("run scontrol");
    let fields = String::from_utf8_lossy(&show.stdout)
        .split_whitespace()
        .filter_map(|field| field.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    BatchJob {
        code: out.status.code(),
        fields,
        output: job_output,
    }
}

/// The batch script: `redio run` of io_failover with `env`, its summary
/// and shared files under `dir`.
fn redio_run_script(mpi: Mpi, exe: &Path, dir: &Path, env: &str) -> String {
    let shared = dir.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    let config = dir.join("redio.yaml");
    std::fs::write(
        &config,
        format!("version: 1\nshared:\n  paths: [\"{}\"]\n", shared.display()),
    )
    .unwrap();
    format!(
        "#!/bin/bash\n\
         echo \"allocation: $SLURM_JOB_NODELIST\"\n\
         {env} {redio} run -n 2 -r 2 --mpi {mpi} --config {config} --summary {summary} \
         -- {exe} {shared} 65536\n",
        redio = redio_bin().display(),
        mpi = mpi.key(),
        config = config.display(),
        summary = dir.join("summary.json").display(),
        exe = exe.display(),
        shared = shared.display(),
    )
}

fn a_two_node_batch_job_survives_a_sigkill(mpi: Mpi) {
    let _machine = launch_lock();
    let exe = compile_flavour(mpi, "io/io_failover.c", Flavour::Fortify);
    let root = fresh_dir(&format!("slurm/{}", mpi.key()));

    let plain_dir = root.join("fault-free");
    std::fs::create_dir_all(&plain_dir).unwrap();
    let script = redio_run_script(mpi, &exe, &plain_dir, "");
    let reference = sbatch(&plain_dir, &script, 1);
    assert_eq!(reference.code, Some(0), "{}", reference.output);
    assert_eq!(
        reference.fields["JobState"], "COMPLETED",
        "{}",
        reference.output
    );
    let expected = files(&plain_dir.join("shared"));
    assert_eq!(
        expected.len(),
        4,
        "io_failover writes 4 files: {expected:?}"
    );

    // World rank 1 (rank 1 of replica 0) is SIGKILLed in its second write.
    let dir = root.join("killed");
    std::fs::create_dir_all(&dir).unwrap();
    let script = redio_run_script(mpi, &exe, &dir, "REDIO_TEST_DIE=1:2:kill");
    let job = sbatch(&dir, &script, 2);
    assert_eq!(job.fields["NumNodes"], "2", "{:?}", job.fields);
    assert_eq!(job.code, Some(0), "{}", job.output);
    assert_eq!(job.fields["JobState"], "COMPLETED", "{}", job.output);
    assert_eq!(job.fields["ExitCode"], "0:0", "{}", job.output);
    assert!(
        files(&dir.join("shared")) == expected,
        "shared files differ from the fault-free run's\n{}",
        job.output
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    let failed: Vec<u64> = summary["failed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["world_rank"].as_u64().unwrap())
        .collect();
    assert_eq!(failed, [1], "the summary names the dead process: {summary}");
    assert_eq!(summary["completed"], true, "{summary}");
}

#[test]
fn a_two_node_batch_job_survives_a_sigkill_mpich() {
    a_two_node_batch_job_survives_a_sigkill(Mpi::Mpich);
}

#[test]
fn a_two_node_batch_job_survives_a_sigkill_openmpi5() {
    a_two_node_batch_job_survives_a_sigkill(Mpi::OpenMpi5);
}

/// Open MPI 4.1's `mpirun` never exits after this death (the dead process
/// was an `orted`'s child with siblings, docs/slurm.md): `redio run` stops
/// it once every process has ended.
#[test]
fn a_two_node_batch_job_survives_a_sigkill_openmpi() {
    a_two_node_batch_job_survives_a_sigkill(Mpi::OpenMpi);
}
