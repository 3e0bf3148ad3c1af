//! Bytes that really reach a shared file, counted from outside with strace:
//! written once (not once per replica) under the protocols that write once,
//! and per file as the YAML rules choose its protocols.

use crate::common::strace::{strace_prefix, written_bytes};
use crate::common::{compile_flavour, Flavour, Job, Launch, Mpi};
use crate::support::{
    assert_like_plain, check_success, lines_with, reference, replicated, stem, Area, FSTREAM,
    POSIX, RANKS, RULES, STDIO, TIMEOUT,
};
use redio::topology::LayoutKind;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A replicated run like [`replicated`] (block layout), every process under
/// strace: the job and the directory of its traces, `<area>/trace`.
pub(crate) fn replicated_under_strace(
    mpi: Mpi,
    exe: &Path,
    area: &Area,
    degree: u32,
    env: &[(&str, &str)],
) -> (Job, PathBuf) {
    let trace = area.root.join("trace");
    let mut args = strace_prefix(&trace);
    args.push(exe.display().to_string());
    let job = replicated(
        mpi,
        Path::new("strace"),
        area,
        (degree, "block"),
        &args,
        env,
    );
    (job, trace)
}

/// Counts the bytes written into Distributed Separate Write's part files
/// (`.NAME.redio-partK.RANK.RUN`) as written into NAME; leaves out their
/// indexes.
fn fold_parts(bytes: BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut folded = BTreeMap::new();
    for (name, count) in bytes {
        if name.ends_with(".idx") {
            continue;
        }
        let target = match name
            .strip_prefix('.')
            .and_then(|n| n.rsplit_once(".redio-part"))
        {
            Some((file, suffix)) if redio::join::PartName::parse(suffix).is_some() => {
                file.to_string()
            }
            _ => name,
        };
        *folded.entry(target).or_insert(0) += count;
    }
    folded
}

/// Under Simple Write one replica writes: the bytes that reach each shared
/// file equal the plain run's (not `degree` times them), and for the files
/// written once front to back, the file's size.
#[test]
fn shared_bytes_are_written_once_mpich() {
    let mpi = Mpi::Mpich;
    // (program, flavour, degrees, the file each rank writes once front to
    // back, with `{}` for the rank, write protocol)
    let cases: [(&str, Flavour, &[u32], &str, &str); 5] = [
        (POSIX, Flavour::Fortify64, &[2, 3], "posix.{}.dat", "simple"),
        (STDIO, Flavour::O0, &[3], "stdio.{}.txt", "simple"),
        (FSTREAM, Flavour::Cxx, &[3], "fstream.{}.txt", "simple"),
        // Distributed Write: once in all, split across the replicas.
        (
            POSIX,
            Flavour::Fortify64,
            &[3],
            "posix.{}.dat",
            "distributed",
        ),
        // Distributed Separate Write: once in all, into the replicas' part
        // files (the join copies inside the kernel, not with write calls);
        // at r=1 straight into the file, with no part to join.
        (
            POSIX,
            Flavour::Fortify64,
            &[1, 2],
            "posix.{}.dat",
            "distributed-separate",
        ),
    ];
    for (source, flavour, degrees, written_once, protocol) in cases {
        written_once_like_plain(mpi, source, flavour, degrees, written_once, protocol);
    }
}

/// Runs `source` plain and at each of `degrees` under `protocol`, every
/// process under strace: the bytes that reach each shared file are the
/// plain run's, and `written_once` (`{}` for the rank), which each rank
/// writes once front to back, got its size in bytes.
pub(crate) fn written_once_like_plain(
    mpi: Mpi,
    source: &str,
    flavour: Flavour,
    degrees: &[u32],
    written_once: &str,
    protocol: &str,
) {
    let once = |rank: u32| written_once.replace("{}", &rank.to_string());
    let exe = compile_flavour(mpi, source, flavour);
    let name = format!("strace-{}-{}-{protocol}", stem(source), flavour.key());
    let env = [("REDIO_IO_WRITE", protocol), ("REDIO_IO_CHUNK_SIZE", "64")];

    let plain_area = Area::new(&format!("{name}-plain"), false);
    let trace = plain_area.root.join("trace");
    let mut command = vec!["-n".to_string(), RANKS.to_string(), "strace".into()];
    command.extend(strace_prefix(&trace));
    command.push(exe.display().to_string());
    command.extend(plain_area.args());
    let plain = Launch::launcher(mpi, command).timeout(TIMEOUT).run();
    check_success(&plain, &format!("plain run of {source} under strace"));
    let plain_bytes = written_bytes(&trace, &plain_area.shared);
    for rank in 0..RANKS {
        let file = once(rank);
        let size = std::fs::metadata(plain_area.shared_file(&file))
            .unwrap()
            .len();
        assert_eq!(
            plain_bytes.get(&file).copied(),
            Some(size),
            "the strace count is wrong: the plain run wrote {file} once; counts: {plain_bytes:?}"
        );
    }

    for &degree in degrees {
        let what = format!("{source} ({flavour:?}) r={degree}, write {protocol}, under strace");
        let area = Area::new(&format!("{name}-r{degree}"), true);
        let (job, trace) = replicated_under_strace(mpi, &exe, &area, degree, &env);
        check_success(&job, &what);
        let unfolded = written_bytes(&trace, &area.shared);
        if degree == 1 {
            let parts: Vec<&String> = unfolded
                .keys()
                .filter(|name| name.contains(".redio-part"))
                .collect();
            assert!(
                parts.is_empty(),
                "{what}: one replica must write the file itself, not parts: {parts:?}"
            );
        }
        let bytes = fold_parts(unfolded);
        println!("{what}: bytes written per shared file: plain {plain_bytes:?}, redio {bytes:?}");
        let mut problems = Vec::new();
        for (file, &expected) in &plain_bytes {
            let got = bytes.get(file).copied().unwrap_or(0);
            if got != expected {
                problems.push(format!(
                    "{file}: {got} bytes written instead of {expected} (r x plain would be {})",
                    expected * u64::from(degree)
                ));
            }
        }
        for (file, got) in &bytes {
            if !plain_bytes.contains_key(file) {
                problems.push(format!(
                    "{file}: {got} bytes written, the plain run wrote none"
                ));
            }
        }
        assert!(
            problems.is_empty(),
            "{what}: bytes that reached the shared files (strace, write calls on \
             their fds):\n  {}",
            problems.join("\n  ")
        );
        for rank in 0..RANKS {
            let file = once(rank);
            let size = std::fs::metadata(area.shared_file(&file)).unwrap().len();
            assert_eq!(bytes.get(&file).copied(), Some(size), "{what}: {file}");
        }
    }
}

/// YAML selection end to end: three rules send three files through three
/// protocol pairs. redio's debug log names each file's protocols, and the
/// bytes counted from outside match each protocol: Distributed and Simple
/// Write put each byte on the file once, None once per replica.
#[test]
fn three_rules_send_three_files_through_three_protocols_mpich() {
    let mpi = Mpi::Mpich;
    let exe = compile_flavour(mpi, RULES, Flavour::O0);
    let plain = reference(mpi, RULES, Flavour::O0, &[]);
    let degree = 3;
    let area = Area::new("rules-r3", true);
    let yaml = format!(
        "version: 1\n\
         shared:\n  paths: [\"{}\"]\n\
         io:\n  read: simple\n  write: simple\n  rules:\n\
         \x20   - {{path: \"*.a\", read: read-distribute, write: distributed, chunk_size: 256}}\n\
         \x20   - {{path: \"*.b\", read: chained, write: simple}}\n\
         \x20   - {{path: \"*.c\", read: none, write: none}}\n",
        area.shared.display()
    );
    std::fs::write(&area.config, yaml).unwrap();
    let (job, trace) =
        replicated_under_strace(mpi, &exe, &area, degree, &[("REDIO_LOG_LEVEL", "debug")]);
    check_success(&job, "io_rules r=3");
    assert_like_plain(
        &plain,
        &job,
        &area,
        degree,
        LayoutKind::Block,
        "io_rules r=3",
    );
    for rank in 0..RANKS {
        for (suffix, log) in [
            ("a", Some("read read-distribute, write distributed")),
            ("b", Some("read chained, write simple")),
            ("c", None),
        ] {
            let file = area.shared_file(&format!("rules.{rank}.{suffix}"));
            let path = file.display().to_string();
            match log {
                Some(protocols) => assert!(
                    !lines_with(&job.stderr, &["coordinated", &path, protocols]).is_empty(),
                    "the debug log must show {path} opened with {protocols}:\n{}",
                    job.stderr
                ),
                None => assert!(
                    !lines_with(&job.stderr, &["ProtocolNone", &path]).is_empty(),
                    "the debug log must show {path} passing through (protocol none):\n{}",
                    job.stderr
                ),
            }
        }
    }
    let bytes = written_bytes(&trace, &area.shared);
    for rank in 0..RANKS {
        let count = |suffix: &str| bytes.get(&format!("rules.{rank}.{suffix}")).copied();
        assert_eq!(count("a"), Some(4096), "distributed: once; {bytes:?}");
        assert_eq!(count("b"), Some(4096), "simple: once; {bytes:?}");
        assert_eq!(
            count("c"),
            Some(4096 * u64::from(degree)),
            "none: once per replica; {bytes:?}"
        );
    }
}
