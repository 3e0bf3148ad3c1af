//! The machine a benchmark ran on, recorded with every result: a figure
//! without its machine cannot be compared with another.
//!
//! Collected cheaply and without failing: the CPU (model, the instruction
//! set extensions redio's kernels choose from, cores) from `/proc/cpuinfo`,
//! memory from `/proc/meminfo`, the kernel from `uname`, the distribution
//! from `/etc/os-release`, the MPI implementation from its launcher's
//! `--version`, the load average from `/proc/loadavg` at the start and the
//! end of the run, the date, and the redio commit when the executable was
//! built in a git checkout. Whatever cannot be found is "unknown".

use crate::cli::flavour::Flavour;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// Longest a version query may take (a launcher that hangs must not hold
/// up the benchmark).
const QUERY_SECONDS: &str = "10";

/// The 1-, 5- and 15-minute load averages, as `/proc/loadavg` gives them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadAverage {
    /// Over the last minute.
    pub one: f64,
    /// Over the last 5 minutes.
    pub five: f64,
    /// Over the last 15 minutes.
    pub fifteen: f64,
}

impl LoadAverage {
    /// Parses the first three numbers of `text`: the contents of
    /// `/proc/loadavg` (`0.52 0.58 0.59 1/467 12345`), or the same three
    /// numbers a caller recorded earlier.
    pub fn parse(text: &str) -> Option<LoadAverage> {
        let mut numbers = text.split_whitespace().map(str::parse::<f64>);
        let mut next = || numbers.next()?.ok().filter(|n| n.is_finite() && *n >= 0.0);
        Some(LoadAverage {
            one: next()?,
            five: next()?,
            fifteen: next()?,
        })
    }

    /// The load average now, if `/proc/loadavg` can be read.
    pub fn now() -> Option<LoadAverage> {
        LoadAverage::parse(&std::fs::read_to_string("/proc/loadavg").ok()?)
    }

    fn to_json(self) -> Value {
        json!({"one": self.one, "five": self.five, "fifteen": self.fifteen})
    }

    fn from_json(value: &Value) -> Option<LoadAverage> {
        Some(LoadAverage {
            one: value["one"].as_f64()?,
            five: value["five"].as_f64()?,
            fifteen: value["fifteen"].as_f64()?,
        })
    }
}

/// The instruction set extensions that decide which kernels run: the
/// parity engine's GF(2^8) and XOR kernels (AVX2, AVX-512, GFNI) and the
/// CRC32 of voting and verification (SSE4.2, PCLMULQDQ, VPCLMULQDQ).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Features {
    /// `avx2`.
    pub avx2: bool,
    /// `avx512f`, the AVX-512 foundation.
    pub avx512f: bool,
    /// `avx512bw` (byte and word operations).
    pub avx512bw: bool,
    /// `avx512vl` (AVX-512 operations on 128- and 256-bit registers).
    pub avx512vl: bool,
    /// `gfni` (Galois field affine transforms).
    pub gfni: bool,
    /// `vpclmulqdq` (carry-less multiplication on vector registers).
    pub vpclmulqdq: bool,
    /// `sse4_2`.
    pub sse4_2: bool,
    /// `pclmulqdq` (carry-less multiplication).
    pub pclmulqdq: bool,
}

impl Features {
    /// The features among the space-separated `flags` of `/proc/cpuinfo`.
    pub fn from_flags(flags: &str) -> Features {
        let mut features = Features::default();
        for flag in flags.split_whitespace() {
            let field = match flag {
                "avx2" => &mut features.avx2,
                "avx512f" => &mut features.avx512f,
                "avx512bw" => &mut features.avx512bw,
                "avx512vl" => &mut features.avx512vl,
                "gfni" => &mut features.gfni,
                "vpclmulqdq" => &mut features.vpclmulqdq,
                "sse4_2" => &mut features.sse4_2,
                "pclmulqdq" => &mut features.pclmulqdq,
                _ => continue,
            };
            *field = true;
        }
        features
    }

    /// One line: `AVX2 yes, AVX-512 yes (F BW VL), GFNI no, …`.
    pub fn summary(&self) -> String {
        let yes = |on: bool| if on { "yes" } else { "no" };
        let avx512 = if self.avx512f {
            let parts: Vec<&str> = [
                (self.avx512f, "F"),
                (self.avx512bw, "BW"),
                (self.avx512vl, "VL"),
            ]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, name)| *name)
            .collect();
            format!("yes ({})", parts.join(" "))
        } else {
            "no".to_string()
        };
        format!(
            "AVX2 {}, AVX-512 {avx512}, GFNI {}, VPCLMULQDQ {}, SSE4.2 {}, PCLMULQDQ {}",
            yes(self.avx2),
            yes(self.gfni),
            yes(self.vpclmulqdq),
            yes(self.sse4_2),
            yes(self.pclmulqdq)
        )
    }

    fn to_json(self) -> Value {
        json!({
            "avx2": self.avx2,
            "avx512f": self.avx512f,
            "avx512bw": self.avx512bw,
            "avx512vl": self.avx512vl,
            "gfni": self.gfni,
            "vpclmulqdq": self.vpclmulqdq,
            "sse4_2": self.sse4_2,
            "pclmulqdq": self.pclmulqdq,
        })
    }

    fn from_json(value: &Value) -> Features {
        let on = |name: &str| value[name].as_bool().unwrap_or(false);
        Features {
            avx2: on("avx2"),
            avx512f: on("avx512f"),
            avx512bw: on("avx512bw"),
            avx512vl: on("avx512vl"),
            gfni: on("gfni"),
            vpclmulqdq: on("vpclmulqdq"),
            sse4_2: on("sse4_2"),
            pclmulqdq: on("pclmulqdq"),
        }
    }
}

/// The CPU as `/proc/cpuinfo` describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Cpu {
    /// `model name` (`unknown` if absent).
    pub model: String,
    /// `vendor_id` (`GenuineIntel`, `AuthenticAMD`).
    pub vendor: Option<String>,
    /// `cpu family`.
    pub family: Option<u32>,
    /// `model` (the number).
    pub model_number: Option<u32>,
    /// Logical processors (`processor` entries).
    pub logical_cores: usize,
    /// Distinct (`physical id`, `core id`) pairs, when every processor
    /// has a `core id`.
    pub physical_cores: Option<usize>,
    /// The `hypervisor` flag: a virtual machine, whose model name and core
    /// count are what the hypervisor chose to show.
    pub hypervisor: bool,
    /// The features of the first processor.
    pub features: Features,
}

impl Cpu {
    /// Parses the text of `/proc/cpuinfo` (one block per processor,
    /// `key : value` lines, blocks separated by blank lines).
    pub fn parse(cpuinfo: &str) -> Cpu {
        let mut cpu = Cpu {
            model: "unknown".into(),
            vendor: None,
            family: None,
            model_number: None,
            logical_cores: 0,
            physical_cores: None,
            hypervisor: false,
            features: Features::default(),
        };
        let mut cores = Vec::new();
        let mut every_core_known = true;
        for block in cpuinfo.split("\n\n") {
            let fields: Vec<(&str, &str)> = block
                .lines()
                .filter_map(|line| {
                    let (key, value) = line.split_once(':')?;
                    Some((key.trim(), value.trim()))
                })
                .collect();
            let field = |name: &str| fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
            if field("processor").is_none() {
                continue;
            }
            let first = cpu.logical_cores == 0;
            cpu.logical_cores += 1;
            match field("core id") {
                Some(core) => {
                    let pair = (field("physical id").unwrap_or("0"), core);
                    if !cores.contains(&pair) {
                        cores.push(pair);
                    }
                }
                None => every_core_known = false,
            }
            if first {
                if let Some(model) = field("model name").filter(|m| !m.is_empty()) {
                    cpu.model = model.to_string();
                }
                cpu.vendor = field("vendor_id").map(str::to_string);
                cpu.family = field("cpu family").and_then(|f| f.parse().ok());
                cpu.model_number = field("model").and_then(|m| m.parse().ok());
                // x86 says `flags`; other architectures `Features`.
                let flags = field("flags").or_else(|| field("Features")).unwrap_or("");
                cpu.features = Features::from_flags(flags);
                cpu.hypervisor = flags.split_whitespace().any(|f| f == "hypervisor");
            }
        }
        if every_core_known && !cores.is_empty() {
            cpu.physical_cores = Some(cores.len());
        }
        cpu
    }

    /// `Intel(R) Xeon(R) Processor (GenuineIntel, family 6, model 143;
    /// virtual machine)`.
    fn describe(&self) -> String {
        let mut details = Vec::new();
        if let Some(vendor) = &self.vendor {
            details.push(vendor.clone());
        }
        if let Some(family) = self.family {
            details.push(format!("family {family}"));
        }
        if let Some(model) = self.model_number {
            details.push(format!("model {model}"));
        }
        let mut details = details.join(", ");
        if self.hypervisor {
            if !details.is_empty() {
                details.push_str("; ");
            }
            details.push_str("virtual machine");
        }
        if details.is_empty() {
            self.model.clone()
        } else {
            format!("{} ({details})", self.model)
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "model": self.model,
            "vendor": self.vendor,
            "family": self.family,
            "model_number": self.model_number,
            "logical_cores": self.logical_cores,
            "physical_cores": self.physical_cores,
            "hypervisor": self.hypervisor,
            "features": self.features.to_json(),
        })
    }

    fn from_json(value: &Value) -> Cpu {
        let string = |name: &str| value[name].as_str().map(str::to_string);
        let number = |name: &str| value[name].as_u64().and_then(|n| u32::try_from(n).ok());
        Cpu {
            model: string("model").unwrap_or_else(|| "unknown".into()),
            vendor: string("vendor"),
            family: number("family"),
            model_number: number("model_number"),
            logical_cores: value["logical_cores"].as_u64().unwrap_or(0) as usize,
            physical_cores: value["physical_cores"].as_u64().map(|n| n as usize),
            hypervisor: value["hypervisor"].as_bool().unwrap_or(false),
            features: Features::from_json(&value["features"]),
        }
    }
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
pub fn parse_meminfo(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let number: u64 = words.next()?.parse().ok()?;
    let unit = match words.next() {
        Some("kB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    number.checked_mul(unit)
}

/// `PRETTY_NAME` of `/etc/os-release`, unquoted.
pub fn parse_os_release(os_release: &str) -> Option<String> {
    let value = os_release
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))?
        .trim();
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    (!value.is_empty()).then(|| value.to_string())
}

/// The implementation and version in the output of `LAUNCHER --version`:
/// Hydra's `Version:` line (and `--with-device=…` of its configure
/// options) for MPICH, the last word of the `(Open MPI)` or `(OpenRTE)`
/// line for Open MPI.
pub fn parse_launcher_version(flavour: Flavour, output: &str) -> Option<String> {
    match flavour {
        Flavour::Mpich => {
            let version = output
                .lines()
                .find_map(|l| l.trim().strip_prefix("Version:"))?
                .trim();
            if version.is_empty() {
                return None;
            }
            let device = output
                .split_once("--with-device=")
                .and_then(|(_, rest)| rest.split(['\'', '"', ' ', '\n']).next())
                .filter(|d| !d.is_empty());
            Some(match device {
                Some(device) => format!("MPICH {version} ({device})"),
                None => format!("MPICH {version}"),
            })
        }
        Flavour::Openmpi | Flavour::Openmpi5 => {
            let line = output
                .lines()
                .find(|l| l.contains("(Open MPI)") || l.contains("(OpenRTE)"))?;
            let version = line.split_whitespace().last()?;
            Some(format!("Open MPI {version}"))
        }
    }
}

/// `flavour` and its version, asked of its launcher (bounded by
/// `timeout`); `… (version unknown)` when that fails.
fn mpi_version(flavour: Flavour) -> String {
    let name = match flavour {
        Flavour::Mpich => "MPICH",
        Flavour::Openmpi => "Open MPI",
        Flavour::Openmpi5 => "Open MPI 5",
    };
    let output = flavour.launcher().ok().and_then(|launcher| {
        Command::new("timeout")
            .arg(QUERY_SECONDS)
            .arg(launcher)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .ok()
    });
    output
        .and_then(|out| {
            let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&out.stderr));
            parse_launcher_version(flavour, &text)
        })
        .unwrap_or_else(|| format!("{name} (version unknown)"))
}

/// `uname -srm`: `Linux 6.1.0-18-amd64 x86_64`.
fn kernel() -> String {
    // SAFETY: uname fills the zeroed struct; its fields are NUL-terminated.
    let mut name: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut name) } != 0 {
        return "unknown".into();
    }
    let text = |field: &[libc::c_char]| {
        let bytes: Vec<u8> = field
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!(
        "{} {} {}",
        text(&name.sysname),
        text(&name.release),
        text(&name.machine)
    )
}

/// The date and time now, in UTC: `2026-11-25 15:40 UTC`.
fn utc_now() -> String {
    // SAFETY: time accepts a null pointer; gmtime_r fills the zeroed tm.
    let now = unsafe { libc::time(std::ptr::null_mut()) };
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    if unsafe { libc::gmtime_r(&now, &mut tm) }.is_null() {
        return "unknown".into();
    }
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min
    )
}

/// The short commit of the git checkout this executable was built in (the
/// nearest of its first few parent directories with `Cargo.toml` and
/// `.git`: `target/<profile>/redio` in the source tree), with `-dirty`
/// when tracked files differ from it; `unknown` elsewhere.
fn source_commit() -> String {
    let tree = std::env::current_exe().ok().and_then(|exe| {
        exe.ancestors()
            .skip(1)
            .take(4)
            .find(|dir| dir.join("Cargo.toml").is_file() && dir.join(".git").exists())
            .map(Path::to_path_buf)
    });
    let Some(tree) = tree else {
        return "unknown".into();
    };
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(&tree)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short", "HEAD"]).filter(|c| !c.is_empty()) {
        Some(commit) => match git(&["status", "--porcelain", "--untracked-files=no"]) {
            Some(changes) if changes.is_empty() => commit,
            _ => format!("{commit}-dirty"),
        },
        None => "unknown".into(),
    }
}

/// Everything recorded about the machine a benchmark ran on.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    /// The CPU.
    pub cpu: Cpu,
    /// Total memory in bytes.
    pub memory_bytes: Option<u64>,
    /// Kernel name, release and architecture (`uname -srm`).
    pub kernel: String,
    /// The distribution (`PRETTY_NAME` of `/etc/os-release`).
    pub os: Option<String>,
    /// The MPI implementations the run used, with their versions.
    pub mpi: Vec<String>,
    /// When the run started, in UTC.
    pub date: String,
    /// The redio commit (`-dirty` with uncommitted changes), or `unknown`.
    pub commit: String,
    /// The load average when the run started.
    pub load_start: Option<LoadAverage>,
    /// The load average when it ended.
    pub load_end: Option<LoadAverage>,
}

impl Machine {
    /// Collects everything but the load at the end (see
    /// [`Machine::finish`]), for a run on `flavours`.
    pub fn collect(flavours: &[Flavour]) -> Machine {
        let load_start = LoadAverage::now();
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        let mut cpu = Cpu::parse(&read("/proc/cpuinfo"));
        if cpu.logical_cores == 0 {
            cpu.logical_cores = std::thread::available_parallelism().map_or(0, |n| n.get());
        }
        Machine {
            cpu,
            memory_bytes: parse_meminfo(&read("/proc/meminfo")),
            kernel: kernel(),
            os: parse_os_release(&read("/etc/os-release")),
            mpi: flavours.iter().map(|&f| mpi_version(f)).collect(),
            date: utc_now(),
            commit: source_commit(),
            load_start,
            load_end: None,
        }
    }

    /// Records the load average at the end of the run.
    pub fn finish(&mut self) {
        self.load_end = LoadAverage::now();
    }

    /// The `machine` object of results.json.
    pub fn to_json(&self) -> Value {
        json!({
            "cpu": self.cpu.to_json(),
            "memory_bytes": self.memory_bytes,
            "kernel": self.kernel,
            "os": self.os,
            "mpi": self.mpi,
            "date": self.date,
            "commit": self.commit,
            "load_start": self.load_start.map(LoadAverage::to_json),
            "load_end": self.load_end.map(LoadAverage::to_json),
        })
    }

    /// Reads back the `machine` object of an earlier results.json (what
    /// [`Machine::to_json`] wrote; a missing field reads as unknown), so
    /// that `redio bench --markdown` prints the block the run recorded.
    pub fn from_json(value: &Value) -> Machine {
        let string = |name: &str| value[name].as_str().map(str::to_string);
        Machine {
            cpu: Cpu::from_json(&value["cpu"]),
            memory_bytes: value["memory_bytes"].as_u64(),
            kernel: string("kernel").unwrap_or_else(|| "unknown".into()),
            os: string("os"),
            mpi: value["mpi"]
                .as_array()
                .map(|all| {
                    all.iter()
                        .filter_map(|m| m.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
            date: string("date").unwrap_or_else(|| "unknown".into()),
            commit: string("commit").unwrap_or_else(|| "unknown".into()),
            load_start: LoadAverage::from_json(&value["load_start"]),
            load_end: LoadAverage::from_json(&value["load_end"]),
        }
    }

    /// The block at the top of results.md (and of `redio bench
    /// --machine`): a `Machine:` line and a short list, Markdown.
    pub fn markdown(&self) -> String {
        let cpu = &self.cpu;
        let mut md = format!(
            "Machine: {}, {} logical cores",
            cpu.describe(),
            cpu.logical_cores
        );
        if let Some(physical) = cpu.physical_cores {
            let _ = write!(md, " ({physical} physical)");
        }
        match self.memory_bytes {
            Some(bytes) => {
                let _ = writeln!(md, ", {:.1} GiB memory", bytes as f64 / f64::from(1 << 30));
            }
            None => md.push_str(", memory unknown\n"),
        }
        let _ = writeln!(md, "- CPU features: {}", cpu.features.summary());
        let mpi = if self.mpi.is_empty() {
            "unknown".to_string()
        } else {
            self.mpi.join(", ")
        };
        let _ = writeln!(
            md,
            "- System: {}, {}; MPI: {mpi}",
            self.kernel,
            self.os.as_deref().unwrap_or("distribution unknown")
        );
        let load = |load: Option<LoadAverage>| {
            load.map_or("unknown".to_string(), |l| format!("{:.2}", l.one))
        };
        let load = match self.load_end {
            Some(_) => format!(
                "{} at start → {} at end",
                load(self.load_start),
                load(self.load_end)
            ),
            None => load(self.load_start),
        };
        let _ = writeln!(
            md,
            "- Run: {}, redio {}, load average (1 min) {load}",
            self.date, self.commit
        );
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two logical cores of an AMD EPYC with AVX2 but neither AVX-512 nor
    /// GFNI (a Zen 2 guest; the flags are cut to the interesting ones).
    const EPYC: &str = "\
processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 23
model\t\t: 49
model name\t: AMD EPYC 7B12
stepping\t: 0
physical id\t: 0
siblings\t: 2
core id\t\t: 0
cpu cores\t: 1
flags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 pclmulqdq avx avx2 bmi2 sha_ni hypervisor
bogomips\t: 4499.99

processor\t: 1
vendor_id\t: AuthenticAMD
cpu family\t: 23
model\t\t: 49
model name\t: AMD EPYC 7B12
physical id\t: 0
siblings\t: 2
core id\t\t: 0
cpu cores\t: 1
flags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 pclmulqdq avx avx2 bmi2 sha_ni hypervisor

";

    /// Four logical cores (two cores, two threads each) of an Intel Xeon
    /// with AVX-512, GFNI and VPCLMULQDQ, on bare metal.
    fn xeon() -> String {
        let mut text = String::new();
        for (processor, core) in [(0, 0), (1, 1), (2, 0), (3, 1)] {
            text.push_str(&format!(
                "processor\t: {processor}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n\
                 model\t\t: 143\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n\
                 physical id\t: 0\ncore id\t\t: {core}\n\
                 flags\t\t: fpu sse4_1 sse4_2 pclmulqdq avx avx2 avx512f avx512dq avx512bw \
                 avx512vl avx512_vbmi gfni vaes vpclmulqdq avx512_vnni\n\n"
            ));
        }
        text
    }

    #[test]
    fn an_epyc_with_avx2_only() {
        let cpu = Cpu::parse(EPYC);
        assert_eq!(cpu.model, "AMD EPYC 7B12");
        assert_eq!(cpu.vendor.as_deref(), Some("AuthenticAMD"));
        assert_eq!((cpu.family, cpu.model_number), (Some(23), Some(49)));
        assert_eq!(cpu.logical_cores, 2);
        assert_eq!(cpu.physical_cores, Some(1), "two threads of one core");
        assert!(cpu.hypervisor);
        let f = cpu.features;
        assert!(f.avx2 && f.sse4_2 && f.pclmulqdq);
        assert!(!f.avx512f && !f.avx512bw && !f.avx512vl && !f.gfni && !f.vpclmulqdq);
        assert_eq!(
            f.summary(),
            "AVX2 yes, AVX-512 no, GFNI no, VPCLMULQDQ no, SSE4.2 yes, PCLMULQDQ yes"
        );
        assert_eq!(
            cpu.describe(),
            "AMD EPYC 7B12 (AuthenticAMD, family 23, model 49; virtual machine)"
        );
    }

    #[test]
    fn a_xeon_with_avx512_and_gfni() {
        let cpu = Cpu::parse(&xeon());
        assert_eq!(cpu.model, "Intel(R) Xeon(R) Platinum 8480+");
        assert_eq!(cpu.logical_cores, 4);
        assert_eq!(cpu.physical_cores, Some(2));
        assert!(!cpu.hypervisor);
        let f = cpu.features;
        assert!(f.avx2 && f.avx512f && f.avx512bw && f.avx512vl && f.gfni && f.vpclmulqdq);
        assert_eq!(
            f.summary(),
            "AVX2 yes, AVX-512 yes (F BW VL), GFNI yes, VPCLMULQDQ yes, SSE4.2 yes, PCLMULQDQ yes"
        );
        // `avx512_vbmi` and `avx512_vnni` are not `avx512vl`.
        assert!(!Features::from_flags("avx512f avx512_vbmi avx512_vnni").avx512vl);
    }

    #[test]
    fn what_cpuinfo_does_not_say_stays_unknown() {
        // No core ids (as on some ARM machines), no model name.
        let cpu = Cpu::parse("processor\t: 0\nFeatures\t: fp asimd crc32\n\nprocessor\t: 1\n");
        assert_eq!(cpu.model, "unknown");
        assert_eq!(cpu.logical_cores, 2);
        assert_eq!(cpu.physical_cores, None);
        assert_eq!(cpu.features, Features::default());
        assert_eq!(Cpu::parse("").logical_cores, 0);
    }

    #[test]
    fn load_averages_parse_from_proc_or_from_a_caller() {
        let load = LoadAverage::parse("1.20 0.85 0.61 2/419 48213\n").unwrap();
        assert_eq!(
            load,
            LoadAverage {
                one: 1.2,
                five: 0.85,
                fifteen: 0.61
            }
        );
        assert_eq!(
            LoadAverage::parse("3 2 1"),
            Some(LoadAverage {
                one: 3.0,
                five: 2.0,
                fifteen: 1.0
            })
        );
        assert_eq!(LoadAverage::parse("1.20 0.85"), None);
        assert_eq!(LoadAverage::parse("high 0.85 0.61"), None);
        assert_eq!(LoadAverage::parse("-1 0 0"), None);
    }

    #[test]
    fn memory_and_distribution() {
        let meminfo = "MemTotal:       24684084 kB\nMemFree:         7277204 kB\n";
        assert_eq!(parse_meminfo(meminfo), Some(24684084 * 1024));
        assert_eq!(parse_meminfo("MemFree: 1 kB\n"), None);
        let os = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
        assert_eq!(
            parse_os_release(os).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            parse_os_release("PRETTY_NAME=Alpine\n").as_deref(),
            Some("Alpine")
        );
        assert_eq!(parse_os_release("NAME=x\n"), None);
    }

    #[test]
    fn launcher_versions() {
        let hydra =
            "HYDRA build details:\n    Version:                                 4.0.2\n    \
                     Release Date:                            Thu Apr  7 12:34:45 CDT 2022\n    \
                     Configure options:                       '--with-hwloc-prefix=/usr' \
                     '--with-device=ch4:ucx' 'FFLAGS=-O2'\n";
        assert_eq!(
            parse_launcher_version(Flavour::Mpich, hydra).as_deref(),
            Some("MPICH 4.0.2 (ch4:ucx)")
        );
        let openmpi4 = "mpirun.openmpi (OpenRTE) 4.1.4\n\nReport bugs to http://www.open-mpi.org/community/help/\n";
        assert_eq!(
            parse_launcher_version(Flavour::Openmpi, openmpi4).as_deref(),
            Some("Open MPI 4.1.4")
        );
        let openmpi5 =
            "mpirun (Open MPI) 5.0.11\n\nReport bugs to https://www.open-mpi.org/community/help/\n";
        assert_eq!(
            parse_launcher_version(Flavour::Openmpi5, openmpi5).as_deref(),
            Some("Open MPI 5.0.11")
        );
        assert_eq!(
            parse_launcher_version(Flavour::Mpich, "command not found"),
            None
        );
        assert_eq!(parse_launcher_version(Flavour::Openmpi, ""), None);
    }

    #[test]
    fn the_block_names_the_machine_and_the_load_before_and_after() {
        let machine = Machine {
            cpu: Cpu::parse(EPYC),
            memory_bytes: Some(24 << 30),
            kernel: "Linux 6.1.0-18-amd64 x86_64".into(),
            os: Some("Debian GNU/Linux 12 (bookworm)".into()),
            mpi: vec!["MPICH 4.0.2 (ch4:ucx)".into()],
            date: "2026-11-25 15:40 UTC".into(),
            commit: "8e05815".into(),
            load_start: LoadAverage::parse("1.2 1 1"),
            load_end: LoadAverage::parse("2.3 1 1"),
        };
        assert_eq!(
            machine.markdown(),
            "Machine: AMD EPYC 7B12 (AuthenticAMD, family 23, model 49; virtual machine), \
             2 logical cores (1 physical), 24.0 GiB memory\n\
             - CPU features: AVX2 yes, AVX-512 no, GFNI no, VPCLMULQDQ no, SSE4.2 yes, PCLMULQDQ yes\n\
             - System: Linux 6.1.0-18-amd64 x86_64, Debian GNU/Linux 12 (bookworm); MPI: MPICH 4.0.2 (ch4:ucx)\n\
             - Run: 2026-11-25 15:40 UTC, redio 8e05815, load average (1 min) 1.20 at start → 2.30 at end\n"
        );
        let json = machine.to_json();
        assert_eq!(json["cpu"]["features"]["avx2"], true);
        assert_eq!(json["cpu"]["features"]["gfni"], false);
        assert_eq!(json["load_end"]["one"], 2.3);
        assert_eq!(json["mpi"][0], "MPICH 4.0.2 (ch4:ucx)");
        // What results.json recorded reads back as the same machine.
        assert_eq!(Machine::from_json(&json), machine);
        let unknown = Machine {
            memory_bytes: None,
            os: None,
            mpi: Vec::new(),
            load_start: None,
            load_end: None,
            ..machine
        };
        let md = unknown.markdown();
        assert!(md.contains(", memory unknown\n"), "{md}");
        assert!(md.contains("distribution unknown; MPI: unknown"), "{md}");
        assert!(md.ends_with("load average (1 min) unknown\n"), "{md}");
        assert_eq!(Machine::from_json(&unknown.to_json()), unknown);
    }

    /// On this machine: never fails, and finds at least a core.
    #[test]
    fn collecting_here_never_fails() {
        let mut machine = Machine::collect(&[Flavour::Mpich]);
        machine.finish();
        assert!(machine.cpu.logical_cores >= 1);
        assert!(machine.markdown().starts_with("Machine: "));
        assert!(machine.mpi[0].starts_with("MPICH"), "{:?}", machine.mpi);
    }
}
