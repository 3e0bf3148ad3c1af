//! Shared by the parity test binaries: a C application (`parity_ckpt`)
//! writing node-local checkpoint files under `redio run` with lazy parity,
//! and snapshots of directories to compare before and after a rebuild.

use super::{compile, fresh_dir, redio_bin, Job, Launch, Mpi};
use redio_parity::format::Header;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Size of rank 0's first file; others grow by 7919 bytes per rank.
pub const SIZE: u32 = 150_000;

/// One parity job: scheme as the config spells it.
pub struct Case {
    /// MPI implementation.
    pub mpi: Mpi,
    /// `parity.scheme`.
    pub scheme: &'static str,
    /// `parity.rs_parity` (RS only).
    pub rs_parity: u32,
    /// Logical ranks.
    pub ranks: u32,
    /// Replicas.
    pub degree: u32,
    /// `parity.set_size`.
    pub set_size: u32,
    /// The application calls `redio_protect` (`when: manual`).
    pub protect_call: bool,
    /// `when: close`, and the application calls `MPI_Barrier` after
    /// closing its files and again after rewriting one.
    pub at_barriers: bool,
    /// `parity.engine`, when set.
    pub engine: Option<&'static str>,
    /// Directory name prefix (one per test binary: scratch is shared).
    pub prefix: &'static str,
    /// `parity.dir` keeps each rank's redundancy file apart from its data,
    /// under [`parity_dir`].
    pub parity_apart: bool,
    /// The job's environment forces the scalar GF kernel and silences
    /// progress lines (`REDIO_PARITY_KERNEL`, `REDIO_PARITY_PROGRESS`).
    pub scalar_kernel: bool,
    /// `REDIO_TEST_DIE` for the job: the application also writes a shared
    /// file before `MPI_Finalize`, whose coordinated operations it counts.
    pub die: Option<&'static str>,
    /// Every rank also writes a file whose name is not UTF-8
    /// (`parity_ckpt … bytes-name`).
    pub bytes_name: bool,
    /// Every rank leaves an unlocked redundancy temporary in its
    /// directory before the protect step (`parity_ckpt … stale-tmp`).
    pub stale_tmp: bool,
}

impl Case {
    /// A MPICH case with one replica.
    pub fn new(scheme: &'static str, ranks: u32, set_size: u32) -> Self {
        Case {
            mpi: Mpi::Mpich,
            scheme,
            rs_parity: 2,
            ranks,
            degree: 1,
            set_size,
            protect_call: false,
            at_barriers: false,
            engine: None,
            prefix: "pm",
            parity_apart: false,
            scalar_kernel: false,
            die: None,
            bytes_name: false,
            stale_tmp: false,
        }
    }

    /// Losses per set the scheme tolerates.
    pub fn tolerance(&self) -> usize {
        match self.scheme {
            "xor" | "partner" => 1,
            "rs" => self.rs_parity as usize,
            _ => 0,
        }
    }

    /// The case's directory name.
    pub fn name(&self) -> String {
        format!(
            "{}-{}-{}-n{}-r{}-s{}{}{}",
            self.prefix,
            self.mpi.key(),
            self.scheme,
            self.ranks,
            self.degree,
            self.set_size,
            if self.protect_call {
                "-api"
            } else if self.at_barriers {
                "-close"
            } else {
                ""
            },
            self.engine.map(|e| format!("-{e}")).unwrap_or_default()
        ) + if self.parity_apart { "-apart" } else { "" }
            + if self.scalar_kernel { "-scalar" } else { "" }
            + &self
                .die
                .map(|d| format!("-die{}", d.replace(':', "_")))
                .unwrap_or_default()
            + if self.bytes_name { "-bytes" } else { "" }
            + if self.stale_tmp { "-stale" } else { "" }
    }

    /// Runs the application; returns the base directory.
    pub fn run(&self) -> PathBuf {
        self.run_job().0
    }

    /// Runs the application; returns the base directory and every rank's
    /// output, concatenated.
    pub fn run_job(&self) -> (PathBuf, String) {
        let (data, job) = self.launch();
        (data, job.ranks.values().cloned().collect())
    }

    /// Runs the application and checks that it succeeded; returns the base
    /// directory and the job (its stderr included).
    pub fn launch(&self) -> (PathBuf, Job) {
        // Non-RS cases give no rs_parity: its default (2) must not be
        // checked against a set size of 2 (it once was, at start-up).
        let rs_parity = if self.scheme == "rs" {
            format!("rs_parity: {}\n  ", self.rs_parity)
        } else {
            String::new()
        };
        let base = fresh_dir(&self.name());
        let data = base.join("data");
        std::fs::create_dir_all(&data).unwrap();
        let config = base.join("redio.yaml");
        let d = data.display();
        let shared = base.join("shared");
        std::fs::create_dir_all(&shared).unwrap();
        // Only a job with a death writes there.
        let shared_paths = match self.die {
            Some(_) => format!("shared:\n  paths: [\"{}\"]\n", shared.display()),
            None => String::new(),
        };
        let parity_dir = if self.parity_apart {
            format!("\n  dir: \"{d}/parity/r{{replica}}/rank{{rank}}\"")
        } else {
            String::new()
        };
        std::fs::write(
            &config,
            format!(
                "version: 1\n{shared_paths}local:\n  paths: [\"{d}\"]\nparity:\n  scheme: {}\n  set_size: {}\n  \
                 {}when: {}\n  failure_group: \"node{{rank}}\"\n  files:\n    - \
                 \"{d}/r{{replica}}/rank{{rank}}/*.dat\"\n    - \
                 \"{d}/r{{replica}}/rank{{rank}}/sub/*\"\n  engine: {}{parity_dir}\nlog:\n  level: info\n",
                self.scheme,
                self.set_size,
                rs_parity,
                if self.protect_call {
                    "manual"
                } else if self.at_barriers {
                    "close"
                } else {
                    "finalize"
                },
                self.engine.unwrap_or("ring"),
            ),
        )
        .unwrap();
        let exe = compile(self.mpi, "parity_ckpt");
        let mut args = vec![data.display().to_string(), SIZE.to_string()];
        if self.protect_call {
            args.push("protect".into());
        } else if self.at_barriers {
            args.push("barrier".into());
        } else if self.die.is_some() {
            args.extend(["shared".into(), shared.display().to_string()]);
        } else if self.bytes_name {
            args.push("bytes-name".into());
        } else if self.stale_tmp {
            args.push("stale-tmp".into());
        }
        let mut launch = Launch::redio(self.mpi, self.ranks, self.degree, "block", &exe)
            .config(&config)
            .args(args)
            .timeout(60);
        if self.scalar_kernel {
            launch = launch
                .env("REDIO_PARITY_KERNEL", "scalar")
                .env("REDIO_PARITY_PROGRESS", "off");
        }
        if let Some(die) = self.die {
            launch = launch.env("REDIO_TEST_DIE", die);
        }
        let job = launch.run();
        job.assert_success();
        (data, job)
    }
}

/// Where rank `rank` of replica `replica` keeps its redundancy file when
/// [`Case::parity_apart`].
pub fn parity_dir(data: &Path, replica: u32, rank: u32) -> PathBuf {
    data.join(format!("parity/r{replica}/rank{rank}"))
}

/// The directory of logical rank `rank` of replica `replica`.
pub fn rank_dir(data: &Path, replica: u32, rank: u32) -> PathBuf {
    data.join(format!("r{replica}/rank{rank}"))
}

pub fn rank_dirs(data: &Path, replica: u32, ranks: u32) -> Vec<PathBuf> {
    (0..ranks).map(|r| rank_dir(data, replica, r)).collect()
}

pub fn redio(head: &[&str], dirs: &[PathBuf]) -> Output {
    Command::new(redio_bin())
        .args(head)
        .args(dirs)
        .output()
        .expect("run redio")
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Every file under `dirs` (redundancy files included): bytes, mode, mtime.
pub type Snapshot = BTreeMap<PathBuf, (Vec<u8>, u32, i64, i64)>;

pub fn snapshot(dirs: &[PathBuf]) -> Snapshot {
    fn walk(d: &Path, out: &mut Snapshot) {
        for e in std::fs::read_dir(d).into_iter().flatten() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                walk(&p, out);
            } else {
                let v = (
                    std::fs::read(&p).unwrap(),
                    m.mode(),
                    m.mtime(),
                    m.mtime_nsec(),
                );
                out.insert(p, v);
            }
        }
    }
    let mut out = BTreeMap::new();
    for d in dirs {
        walk(d, &mut out);
    }
    out
}

/// The data files of a snapshot (without redundancy files, whose mtime is
/// not restored).
pub fn data_only(s: &Snapshot) -> Snapshot {
    s.iter()
        .filter(|(p, _)| p.extension().is_none_or(|x| x != "rdp"))
        .map(|(p, v)| (p.clone(), v.clone()))
        .collect()
}

pub fn contents(s: &Snapshot) -> BTreeMap<PathBuf, Vec<u8>> {
    s.iter().map(|(p, v)| (p.clone(), v.0.clone())).collect()
}

/// The header of the redundancy file in `dir`.
pub fn header(dir: &Path) -> Header {
    let f = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "rdp"))
        .unwrap_or_else(|| panic!("no redundancy file in {}", dir.display()));
    let bytes = std::fs::read(&f).unwrap();
    let n = Header::length_from_prefix(&bytes[..16]).unwrap() as usize;
    Header::decode(&bytes[..n]).unwrap()
}
