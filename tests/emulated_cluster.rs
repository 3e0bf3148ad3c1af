//! Test of the emulated cluster (`cluster/redio-cluster`): it starts the
//! cluster, writes and reads through the per-replica mounts, verifies the
//! data and the topology (shared: every replica sees one export; separate:
//! each replica has its own), checks that one client's throughput stays at
//! or below the link cap while coming close to it (the link, not the CPU,
//! is the bottleneck), and always tears down, also when an assertion
//! fails (a drop guard).
//!
//! Needs root, `/dev/fuse`, and what `scripts/setup.sh` installs. Without
//! them the tests fail with a message saying what is missing: they never
//! pass silently. Every external command runs under `timeout`, and every
//! read or write through a mount runs in a thread the test waits for with
//! a deadline, so a hung mount fails the test instead of hanging it.
//! The tests of this binary run one at a time (the machine has 2 cores and
//! they measure throughput).

mod common;

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Link cap of every test cluster: low, so that a transfer is link-bound
/// and short.
const RATE: &str = "200mbit";
/// The cap in bytes per second.
const CAP_BYTES_PER_SEC: f64 = 200e6 / 8.0;
/// Size of the file whose transfer is timed (about 1.3 s at the cap).
const TIMED_FILE: usize = 32 << 20;
/// Block size of the timed writes and reads.
const BLOCK: usize = 1 << 20;
/// Measured throughput may exceed the cap by this factor (tbf's 256 KiB
/// bursts, timer granularity) and no more.
const CAP_TOLERANCE: f64 = 1.05;
/// Measured throughput must reach this fraction of the cap: below it,
/// something other than the link (CPU, a broken client) is the bottleneck.
const LINK_BOUND_FRACTION: f64 = 0.5;
/// Seconds any one script invocation may take.
const SCRIPT_TIMEOUT_SECS: u32 = 60;
/// Seconds any one read or write phase through a mount may take.
const IO_TIMEOUT: Duration = Duration::from_secs(20);

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn script() -> PathBuf {
    common::repo().join("cluster/redio-cluster")
}

/// Fails the test, with what to do, when the machine cannot run the
/// emulator at all.
fn require_environment() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    assert_eq!(
        euid, 0,
        "tests/emulated_cluster.rs needs root (network namespaces, tc, FUSE mounts); \
         run the test suite as root, as CI does"
    );
    assert!(
        Path::new("/dev/fuse").exists(),
        "tests/emulated_cluster.rs needs /dev/fuse: this kernel or container has no FUSE"
    );
}

/// Runs `cluster/redio-cluster ARGS` under timeout(1).
fn run_script(args: &[&str]) -> Output {
    Command::new("timeout")
        .args(["-k", "5", &SCRIPT_TIMEOUT_SECS.to_string()])
        .arg(script())
        .args(args)
        .output()
        .expect("cannot run timeout(1) (coreutils)")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A running emulated cluster; dropping it runs `redio-cluster down`.
struct Cluster {
    root: PathBuf,
    mounts: Vec<PathBuf>,
    kind: &'static str,
}

impl Cluster {
    /// `redio-cluster up` with `replicas` mounts under a fresh directory.
    fn up(kind: &'static str, topology: &str, replicas: u32) -> Cluster {
        require_environment();
        let root = common::scratch().join(format!("cluster-{kind}-{topology}"));
        // A cluster left by an earlier, killed run is torn down first.
        if root.exists() {
            let _ = run_script(&["down", "--root", root.to_str().unwrap()]);
            let _ = fs::remove_dir_all(&root);
        }
        fs::create_dir_all(&root).unwrap();
        let started = Instant::now();
        let replicas_arg = replicas.to_string();
        let args = [
            "up",
            "--kind",
            kind,
            "--topology",
            topology,
            "--replicas",
            &replicas_arg,
            "--rate",
            RATE,
            "--root",
            root.to_str().unwrap(),
        ];
        let output = run_script(&args);
        // From here on the guard tears down, whatever happens.
        let cluster = Cluster {
            root: root.clone(),
            mounts: (0..replicas)
                .map(|k| root.join(format!("replica{k}")))
                .collect(),
            kind,
        };
        assert!(
            output.status.success(),
            "redio-cluster {} failed ({}):\n{}",
            args.join(" "),
            output.status,
            text(&output.stderr)
        );
        let printed: Vec<PathBuf> = text(&output.stdout).lines().map(PathBuf::from).collect();
        assert_eq!(printed, cluster.mounts, "up should print the mount points");
        eprintln!(
            "{kind} {topology} r={replicas} up in {:.2} s",
            started.elapsed().as_secs_f64()
        );
        cluster
    }

    fn mount(&self, replica: usize) -> &Path {
        &self.mounts[replica]
    }

    /// The namespace prefix recorded in the state file (`redio<N>`).
    fn prefix(&self) -> String {
        let state = fs::read_to_string(self.root.join(".redio-cluster/state.json"))
            .expect("state file of a running cluster");
        let start = state.find("\"prefix\": \"").expect("prefix in state") + 11;
        let end = start + state[start..].find('"').unwrap();
        state[start..end].to_string()
    }

    fn status_ok(&self) -> bool {
        run_script(&["status", "--root", self.root.to_str().unwrap()])
            .status
            .success()
    }

    /// `down`, then checks that no namespace or mount is left behind.
    fn down_and_check(self) {
        let prefix = self.prefix();
        let root = self.root.clone();
        let started = Instant::now();
        drop(self);
        eprintln!("down in {:.2} s", started.elapsed().as_secs_f64());
        let namespaces = Command::new("ip").args(["netns", "list"]).output().unwrap();
        let left: Vec<String> = text(&namespaces.stdout)
            .lines()
            .filter(|l| l.starts_with(&format!("{prefix}-")))
            .map(String::from)
            .collect();
        assert!(left.is_empty(), "namespaces left behind: {left:?}");
        let mounts = fs::read_to_string("/proc/self/mountinfo").unwrap();
        let root_text = root.to_str().unwrap();
        let left: Vec<&str> = mounts.lines().filter(|l| l.contains(root_text)).collect();
        assert!(left.is_empty(), "mounts left behind: {left:?}");
        assert!(
            !run_script(&["status", "--root", root_text])
                .status
                .success(),
            "status should fail once the cluster is down"
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let output = run_script(&["down", "--root", self.root.to_str().unwrap()]);
        eprint!("{}", text(&output.stderr));
        if !output.status.success() {
            // Not a panic: this may run while an assertion unwinds.
            eprintln!(
                "redio-cluster down --root {} failed ({}):\n{}",
                self.root.display(),
                output.status,
                text(&output.stderr)
            );
        }
    }
}

/// Runs `work` in a thread and waits at most [`IO_TIMEOUT`] for it.
fn bounded<T: Send + 'static>(what: &str, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(work());
    });
    match receiver.recv_timeout(IO_TIMEOUT) {
        Ok(value) => value,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: no answer after {IO_TIMEOUT:?} (mount hung?)")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: failed (see above)"),
    }
}

/// Deterministic, incompressible bytes (xorshift64*), different per seed.
fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        out.extend_from_slice(&state.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Writes `data` to `path` in [`BLOCK`]-sized writes, then fsync; returns
/// bytes per second.
fn timed_write(path: PathBuf, data: Vec<u8>) -> f64 {
    bounded(&format!("write {}", path.display()), move || {
        let started = Instant::now();
        let mut file = File::create(&path).unwrap_or_else(|e| panic!("create {path:?}: {e}"));
        for chunk in data.chunks(BLOCK) {
            file.write_all(chunk)
                .unwrap_or_else(|e| panic!("write {path:?}: {e}"));
        }
        file.sync_all()
            .unwrap_or_else(|e| panic!("fsync {path:?}: {e}"));
        drop(file);
        data.len() as f64 / started.elapsed().as_secs_f64()
    })
}

/// Reads `path` in [`BLOCK`]-sized reads; returns the bytes and bytes per
/// second.
fn timed_read(path: PathBuf) -> (Vec<u8>, f64) {
    bounded(&format!("read {}", path.display()), move || {
        let started = Instant::now();
        let mut file = File::open(&path).unwrap_or_else(|e| panic!("open {path:?}: {e}"));
        let mut data = Vec::new();
        let mut block = vec![0u8; BLOCK];
        loop {
            let n = file
                .read(&mut block)
                .unwrap_or_else(|e| panic!("read {path:?}: {e}"));
            if n == 0 {
                break;
            }
            data.extend_from_slice(&block[..n]);
        }
        let rate = data.len() as f64 / started.elapsed().as_secs_f64();
        (data, rate)
    })
}

/// The link must be the bottleneck: at or below the cap, and close to it.
fn assert_link_bound(what: &str, bytes_per_sec: f64) {
    let mb = bytes_per_sec / 1e6;
    let cap = CAP_BYTES_PER_SEC / 1e6;
    eprintln!("{what}: {mb:.1} MB/s (cap {cap:.1} MB/s)");
    assert!(
        bytes_per_sec <= CAP_BYTES_PER_SEC * CAP_TOLERANCE,
        "{what}: {mb:.1} MB/s exceeds the {cap:.1} MB/s cap: the data did not cross the capped link"
    );
    assert!(
        bytes_per_sec >= CAP_BYTES_PER_SEC * LINK_BOUND_FRACTION,
        "{what}: {mb:.1} MB/s is far below the {cap:.1} MB/s cap: the link is not the bottleneck \
         (a busy CPU, or a slow client)"
    );
}

/// Runs `redio-cluster calibrate --clients N` on a running cluster and
/// returns the calibration line and its total write and read throughput in
/// bytes per second.
fn calibrate(cluster: &Cluster, clients: u32, mib_per_client: u32) -> (String, f64, f64) {
    let output = run_script(&[
        "calibrate",
        "--root",
        cluster.root.to_str().unwrap(),
        "--clients",
        &clients.to_string(),
        "--size-mb",
        &mib_per_client.to_string(),
    ]);
    let stdout = text(&output.stdout);
    assert!(
        output.status.success(),
        "calibrate failed ({}):\n{stdout}{}",
        output.status,
        text(&output.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("calibration: "))
        .unwrap_or_else(|| panic!("no calibration line in {stdout:?}"))
        .to_string();
    // "... write 12 + 12 = 24 MB/s read 12 + 12 = 24 MB/s, cap 25 MB/s ..."
    let total = |key: &str| -> f64 {
        let at = line
            .find(key)
            .unwrap_or_else(|| panic!("{key:?} in {line:?}"));
        let rest = &line[at + key.len()..];
        let figures = &rest[..rest.find(" MB/s").unwrap()];
        let last = figures.rsplit(' ').next().unwrap();
        let mb: f64 = last
            .parse()
            .unwrap_or_else(|e| panic!("{last:?} in {line:?}: {e}"));
        mb * 1e6
    };
    let (write, read) = (total(" write "), total(" read "));
    eprintln!("{line}");
    (line, write, read)
}

/// Positioned writes and reads, truncate, rename, mkdir, readdir, unlink
/// through `writer`, each checked through `reader` (the same mount or
/// another client of the same server).
fn exercise_posix(writer: PathBuf, reader: PathBuf) {
    bounded("POSIX operations", move || {
        let dir = writer.join("dir");
        fs::create_dir(&dir).unwrap();
        let path = dir.join("offsets.bin");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        file.write_all_at(b"tail", 3 << 20).unwrap(); // a hole before it
        file.write_all_at(b"head", 10).unwrap();
        let mut buf = [0u8; 6];
        file.read_exact_at(&mut buf, 8).unwrap();
        assert_eq!(&buf, b"\0\0head");
        file.sync_all().unwrap();
        assert_eq!(file.metadata().unwrap().len(), (3 << 20) + 4);
        file.set_len(12).unwrap();
        drop(file);

        let seen = reader.join("dir/offsets.bin");
        assert_eq!(fs::read(&seen).unwrap(), b"\0\0\0\0\0\0\0\0\0\0he");
        fs::rename(&path, dir.join("renamed.bin")).unwrap();
        let names: Vec<String> = fs::read_dir(reader.join("dir"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["renamed.bin"]);
        fs::remove_file(reader.join("dir/renamed.bin")).unwrap();
        assert!(!dir.join("renamed.bin").exists());
        fs::remove_dir(reader.join("dir")).unwrap();
        assert!(!dir.exists());
    });
}

/// One NFS server, two clients: both mounts show one export, and one
/// client's throughput is capped by its link.
#[test]
fn nfs_shared_topology() {
    let _serial = serial();
    let cluster = Cluster::up("nfs", "shared", 2);
    assert!(cluster.status_ok(), "status should pass on a fresh cluster");
    // up is idempotent: a second call finds the cluster up.
    let again = run_script(&[
        "up",
        "--kind",
        "nfs",
        "--topology",
        "shared",
        "--replicas",
        "2",
        "--rate",
        RATE,
        "--root",
        cluster.root.to_str().unwrap(),
    ]);
    assert!(
        again.status.success() && text(&again.stderr).contains("already up"),
        "second up should find the cluster up:\n{}",
        text(&again.stderr)
    );

    let data = pattern(TIMED_FILE, 1);
    let write_rate = timed_write(cluster.mount(0).join("big.bin"), data.clone());
    assert_link_bound("nfs shared: write through replica0", write_rate);
    // Through the other client: the bytes cross the server's link again,
    // nothing comes from a local cache.
    let (back, read_rate) = timed_read(cluster.mount(1).join("big.bin"));
    assert!(
        back == data,
        "replica1 read different bytes than replica0 wrote"
    );
    assert_link_bound("nfs shared: read through replica1", read_rate);

    exercise_posix(
        cluster.mount(0).to_path_buf(),
        cluster.mount(1).to_path_buf(),
    );
    fs::remove_file(cluster.mount(1).join("big.bin")).unwrap();
    assert!(!cluster.mount(0).join("big.bin").exists());

    // Two clients of one server share the server's link: together they
    // get no more than one link's worth.
    let (line, write, read) = calibrate(&cluster, 2, 16);
    assert!(line.contains("nfs 2 clients (shared, 1 server)"), "{line}");
    for (what, total) in [("write", write), ("read", read)] {
        assert!(
            total <= CAP_BYTES_PER_SEC * CAP_TOLERANCE + 1e6, // the line rounds to 1 MB/s
            "shared topology: 2 clients {what} {total:.0} B/s together, more than one server link: {line}"
        );
    }
    cluster.down_and_check();
}

/// A server per replica: each mount shows its own export.
#[test]
fn nfs_separate_topology() {
    let _serial = serial();
    let cluster = Cluster::up("nfs", "separate", 2);
    assert!(cluster.status_ok(), "status should pass on a fresh cluster");

    let data0 = pattern(TIMED_FILE, 2);
    let data1 = pattern(1 << 20, 3);
    let write_rate = timed_write(cluster.mount(0).join("big.bin"), data0.clone());
    assert_link_bound("nfs separate: write through replica0", write_rate);
    timed_write(cluster.mount(1).join("small.bin"), data1.clone());
    assert!(
        !cluster.mount(1).join("big.bin").exists(),
        "separate topology: replica1 sees replica0's file"
    );
    assert!(
        !cluster.mount(0).join("small.bin").exists(),
        "separate topology: replica0 sees replica1's file"
    );
    let (back0, read_rate) = timed_read(cluster.mount(0).join("big.bin"));
    assert!(back0 == data0, "replica0 read back different bytes");
    assert_link_bound("nfs separate: read through replica0", read_rate);
    let (back1, _) = timed_read(cluster.mount(1).join("small.bin"));
    assert!(back1 == data1, "replica1 read back different bytes");

    exercise_posix(
        cluster.mount(1).to_path_buf(),
        cluster.mount(1).to_path_buf(),
    );

    // A server per replica: two clients together get well over one link's
    // worth (each has its own server and link).
    let (line, write, read) = calibrate(&cluster, 2, 16);
    assert!(
        line.contains("nfs 2 clients (separate, 2 servers)"),
        "{line}"
    );
    for (what, total) in [("write", write), ("read", read)] {
        assert!(
            total >= CAP_BYTES_PER_SEC * 1.5,
            "separate topology: 2 clients {what} only {total:.0} B/s together, not ~2 links' worth: {line}"
        );
        assert!(
            total <= 2.0 * CAP_BYTES_PER_SEC * CAP_TOLERANCE + 2e6,
            "separate topology: 2 clients {what} {total:.0} B/s, more than two links: {line}"
        );
    }
    cluster.down_and_check();
}

/// The sshfs kind: same layout and network, SFTP instead of NFS.
#[test]
fn sshfs_shared_smoke() {
    let _serial = serial();
    let cluster = Cluster::up("sshfs", "shared", 2);
    assert_eq!(cluster.kind, "sshfs");
    let data = pattern(TIMED_FILE, 4);
    let write_rate = timed_write(cluster.mount(0).join("big.bin"), data.clone());
    assert_link_bound("sshfs shared: write through replica0", write_rate);
    let (back, read_rate) = timed_read(cluster.mount(1).join("big.bin"));
    assert!(
        back == data,
        "replica1 read different bytes than replica0 wrote"
    );
    assert_link_bound("sshfs shared: read through replica1", read_rate);
    exercise_posix(
        cluster.mount(0).to_path_buf(),
        cluster.mount(1).to_path_buf(),
    );
    cluster.down_and_check();
}

/// `redio bench --traffic` counts the bytes that really cross the servers'
/// links: Simple Write at r=2 puts the file's bytes on the wire once (as
/// None at r=1 does), None at r=2 twice, and Simple Read at r=2 with the
/// page cache dropped fetches them twice from the one server.
#[test]
fn bench_counts_the_bytes_on_the_wire() {
    let _serial = serial();
    let cluster = Cluster::up("nfs", "shared", 2);
    let root = cluster.root.to_str().unwrap().to_string();
    let out = common::fresh_dir("bench-wire");
    let result = Command::new("timeout")
        .args(["-k", "5", "300"])
        .arg(env!("CARGO_BIN_EXE_redio"))
        .args(["bench", "--mpi", "mpich", "--dir", "/redio-bench"])
        .arg("--replica-dir")
        .arg(format!("{root}/replica{{replica}}"))
        .args(["--kind", "nfs", "--topology", "shared"])
        .args(["--write", "none,simple", "--read", "simple"])
        .args(["--degrees", "2", "--blocks", "1MiB", "--total", "8MiB"])
        .args(["--reps", "1", "--drop-caches", "--timeout-seconds", "120"])
        .arg("--traffic")
        .arg(format!("{} traffic --root {root}", script().display()))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        result.status.success(),
        "redio bench --traffic failed ({}):\n{}\n{}",
        result.status,
        text(&result.stdout),
        text(&result.stderr)
    );
    let csv = fs::read_to_string(out.join("results.csv")).unwrap();
    // (mode, protocol, degree) -> bytes on the wire / bytes of the file
    let ratio = |mode: &str, protocol: &str, degree: &str| -> f64 {
        let row = csv
            .lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|f| f[2] == mode && f[3] == protocol && f[4] == degree)
            .unwrap_or_else(|| panic!("no {mode} {protocol} r={degree} row:\n{csv}"));
        let wire: f64 = row[9]
            .parse()
            .unwrap_or_else(|_| panic!("no count: {row:?}"));
        wire / row[6].parse::<f64>().unwrap()
    };
    let once = ratio("write", "none", "1");
    // TCP/IP and RPC headers add a few percent, never a second copy.
    assert!(
        (1.0..1.15).contains(&once),
        "None r=1 put {once:.3}x the file's bytes on the wire:\n{csv}"
    );
    let simple = ratio("write", "simple", "2");
    assert!(
        (simple / once - 1.0).abs() < 0.05,
        "Simple Write r=2 put {simple:.3}x the file's bytes on the wire, None r=1 {once:.3}x:\n{csv}"
    );
    let none2 = ratio("write", "none", "2");
    assert!(
        none2 / once > 1.9,
        "None r=2 should write every byte twice: {none2:.3}x against {once:.3}x:\n{csv}"
    );
    let read_once = ratio("read", "none", "1");
    let read_simple = ratio("read", "simple", "2");
    assert!(
        read_simple / read_once > 1.9,
        "Simple Read r=2 on one server should fetch every byte twice: \
         {read_simple:.3}x against {read_once:.3}x:\n{csv}"
    );
    let md = fs::read_to_string(out.join("results.md")).unwrap();
    assert!(md.contains("wire bytes / file bytes"), "{md}");
    // None at r=2 is measured too, but the baseline is None at r=1.
    for line in md.lines().filter(|l| l.contains("| none | 1 |")) {
        let columns: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(columns[7], "1.00", "None r=1 against itself: {line}\n{md}");
    }
    cluster.down_and_check();
}
