//! Hook coverage, proved mechanically: the programs' imports (`nm -D`) plus
//! the entry points they look up with `dlsym` cover the list, libredio.so
//! exports every hook, and libstdc++'s streams reach the C library only
//! through hooked calls.

use crate::common::{self, compile_flavour, Flavour, Launch, Mpi};
use crate::stacks::{DIRS, LOCKS};
use crate::support::{
    check_success, stem, Area, AIO, CHILD, FAULTS, FSTREAM, POSIX, STDIO, THREADS, TIMEOUT,
    UNSUPPORTED,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every program and the flavours it is compiled in.
const PROGRAMS: [(&str, Flavour); 18] = [
    (POSIX, Flavour::O0),
    (POSIX, Flavour::Fortify),
    (POSIX, Flavour::Fortify64),
    (STDIO, Flavour::O0),
    (STDIO, Flavour::Fortify),
    (STDIO, Flavour::Fortify64),
    (FSTREAM, Flavour::Cxx),
    (THREADS, Flavour::Fortify),
    (CHILD, Flavour::Fortify),
    (FAULTS, Flavour::Fortify),
    (UNSUPPORTED, Flavour::O0),
    (UNSUPPORTED, Flavour::Fortify64),
    (DIRS, Flavour::Fortify),
    (DIRS, Flavour::Fortify64),
    (LOCKS, Flavour::Fortify),
    (LOCKS, Flavour::Fortify64),
    (AIO, Flavour::O0),
    (AIO, Flavour::Fortify64),
];

/// Every entry point of the coverage list, each called by at least
/// one program on a shared and on a node-local directory.
#[rustfmt::skip]
const COVERAGE: &[&str] = &[
    // open and create
    "open", "open64", "__open_2", "__open64_2", "openat", "openat64", "__openat_2", "creat",
    "creat64",
    // data transfer
    "read", "write", "pread", "pwrite", "pread64", "pwrite64", "readv", "writev", "preadv",
    "pwritev", "preadv2", "pwritev2", "__read_chk", "__pread_chk", "__pread64_chk",
    // seek and descriptors
    "lseek", "lseek64", "close", "close_range", "dup", "dup2", "dup3", "fcntl",
    // sync, truncate, stat, names
    "fsync", "fdatasync", "ftruncate", "ftruncate64", "fstat", "fstat64", "stat", "stat64",
    "lstat", "lstat64", "fstatat", "fstatat64", "statx", "__fxstat", "__xstat", "__lxstat",
    "__fxstat64", "__xstat64", "__lxstat64", "unlink", "rename",
    // directories, names and attributes (issue 18)
    "mkdir", "mkdirat", "rmdir", "remove", "mkfifo", "mkfifoat", "unlinkat", "renameat", "renameat2", "access", "faccessat",
    "eaccess", "euidaccess", "mknod", "mknodat", "symlink", "symlinkat", "link", "linkat",
    "chmod", "fchmod", "fchmodat", "chown", "lchown", "fchown", "fchownat", "utime", "utimes",
    "utimensat", "futimens", "truncate", "opendir", "fdopendir", "readdir", "rewinddir",
    "closedir",
    // locks (issue 18; fcntl's lock commands go through fcntl)
    "flock", "lockf",
    // asynchronous I/O and file-system queries (issue 18)
    "aio_read", "aio_write", "aio_fsync", "aio_error", "aio_return", "aio_suspend", "aio_cancel",
    "lio_listio", "statfs", "statvfs",
    // stdio streams
    "fopen", "fopen64", "fdopen", "freopen", "freopen64", "fclose", "fileno", "fflush",
    // stdio served through the streams (not hooked themselves)
    "fprintf", "__fprintf_chk", "fscanf", "fgets", "__fgets_chk", "getline", "fread",
    "__fread_chk", "fwrite", "fseek", "ftell", "rewind",
];

/// Served by redio's stream callbacks, not hooked: need not be exported.
#[rustfmt::skip]
const THROUGH_STREAMS: &[&str] = &[
    "fprintf", "__fprintf_chk", "fscanf", "fgets", "__fgets_chk", "getline", "fread",
    "__fread_chk", "fwrite", "fseek", "ftell", "rewind",
];

/// Entry points outside the list that the programs call anyway (the
/// `_FILE_OFFSET_BITS=64` and fortified variants, `__fxstatat*` through
/// dlsym, and the calls redio must refuse): libredio.so must hook them too,
/// or they bypass it.
#[rustfmt::skip]
const ALSO_HOOKED: &[&str] = &[
    // _FILE_OFFSET_BITS=64 (and fortified) variants
    "__openat64_2", "fcntl64", "preadv64", "pwritev64", "preadv64v2", "pwritev64v2",
    // the other stat compatibility entry points
    "__fxstatat", "__fxstatat64",
    // _FILE_OFFSET_BITS=64 variants of the issue 18 calls
    "truncate64", "readdir64", "lockf64",
    "aio_read64", "aio_write64", "aio_fsync64", "aio_error64", "aio_return64", "aio_suspend64",
    "aio_cancel64", "lio_listio64", "statfs64", "statvfs64",
    // refused on managed files
    "mmap", "mmap64", "sendfile", "sendfile64", "copy_file_range", "splice",
];

/// Names by which a listed function is linked.
fn linked_as(symbol: &str) -> &[&str] {
    match symbol {
        "fscanf" => &["fscanf", "__isoc99_fscanf"],
        _ => std::slice::from_ref(
            match COVERAGE.iter().chain(ALSO_HOOKED).find(|s| **s == symbol) {
                Some(s) => s,
                None => panic!("{symbol} is not in the lists"),
            },
        ),
    }
}

fn nm(args: &[&str], file: &Path) -> BTreeSet<String> {
    let output = Command::new("nm")
        .args(args)
        .arg(file)
        .output()
        .expect("cannot run nm (binutils)");
    assert!(
        output.status.success(),
        "nm {args:?} {} failed: {}",
        file.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().last())
        .map(|symbol| symbol.split('@').next().unwrap().to_string())
        .collect()
}

/// The names the programs call through `DLSYM("name")` (see io_posix.c).
fn dlsym_names() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (source, _) in PROGRAMS {
        let text =
            std::fs::read_to_string(common::repo().join("tests/programs").join(source)).unwrap();
        for piece in text.split("DLSYM(\"").skip(1) {
            names.insert(piece.split('"').next().unwrap().to_string());
        }
    }
    names
}

/// Everything the MPICH builds of the programs import, plus the dlsym names.
fn program_calls() -> BTreeMap<String, Vec<String>> {
    let mut calls: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (source, flavour) in PROGRAMS {
        let exe = compile_flavour(Mpi::Mpich, source, flavour);
        for symbol in nm(&["-D", "--undefined-only"], &exe) {
            calls
                .entry(symbol)
                .or_default()
                .push(format!("{} ({})", stem(source), flavour.key()));
        }
    }
    for name in dlsym_names() {
        calls
            .entry(name)
            .or_default()
            .push("io_posix (dlsym)".into());
    }
    calls
}

/// (a) The programs, between their flavours, call every listed entry point
/// and every one of [`ALSO_HOOKED`].
#[test]
fn programs_call_every_listed_symbol() {
    let calls = program_calls();
    let missing: Vec<&str> = COVERAGE
        .iter()
        .chain(ALSO_HOOKED)
        .copied()
        .filter(|symbol| {
            !linked_as(symbol)
                .iter()
                .any(|name| calls.contains_key(*name))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "no test program calls {missing:?}; the programs import:\n{:#?}",
        calls.keys().collect::<Vec<_>>()
    );
    // Print who proves what (visible with --nocapture).
    for symbol in COVERAGE.iter().chain(ALSO_HOOKED) {
        let by: Vec<&String> = linked_as(symbol)
            .iter()
            .filter_map(|name| calls.get(*name))
            .flatten()
            .collect();
        println!("{symbol:16} {by:?}");
    }
}

/// (b) libredio.so exports a hook for every entry point that is not served
/// through a stream, and for every one of [`ALSO_HOOKED`].
fn library_exports_every_hook(mpi: Mpi) {
    // The library `redio run` uses: $REDIO_LIB_DIR/<mpi>/, else the source
    // tree's build.
    let library = match std::env::var_os("REDIO_LIB_DIR") {
        Some(dir) => PathBuf::from(dir).join(mpi.key()).join("libredio.so"),
        None => common::repo()
            .join("target")
            .join(mpi.key())
            .join("release/libredio.so"),
    };
    assert!(
        library.exists(),
        "{} is missing: build it with scripts/build.sh",
        library.display()
    );
    let exported = nm(&["-D", "--defined-only"], &library);
    let missing: Vec<&str> = COVERAGE
        .iter()
        .filter(|s| !THROUGH_STREAMS.contains(s))
        .chain(ALSO_HOOKED)
        .copied()
        .filter(|symbol| !exported.contains(*symbol))
        .collect();
    assert!(
        missing.is_empty(),
        "{} does not export {} hooks: {missing:?} (a program calling them bypasses redio)",
        library.display(),
        missing.len()
    );
}

#[test]
fn libredio_exports_every_hook_mpich() {
    library_exports_every_hook(Mpi::Mpich);
}

#[test]
fn libredio_exports_every_hook_openmpi() {
    library_exports_every_hook(Mpi::OpenMpi);
}

#[test]
fn libredio_exports_every_hook_openmpi5() {
    library_exports_every_hook(Mpi::OpenMpi5);
}

/// libstdc++'s file streams reach the C library through fopen64, fileno,
/// read, write, writev, lseek64 and fclose (and not through stdio's data
/// functions): so hooking those, with `fileno` answering a managed fd,
/// covers `std::ofstream` / `std::ifstream`. Checked on a plain run with
/// `LD_DEBUG=bindings` (libstdc++ binds lazily, so only what is called
/// shows up).
#[test]
fn cxx_streams_go_through_fopen64_fileno_and_fd_calls() {
    let exe = compile_flavour(Mpi::Mpich, FSTREAM, Flavour::Cxx);
    let area = Area::new("ld-debug-fstream", false);
    let output = area.root.join("ld");
    let job = Launch::plain(Mpi::Mpich, 1, &exe)
        .args(area.args())
        .env("LD_DEBUG", "bindings")
        .env("LD_DEBUG_OUTPUT", &output.display().to_string())
        .timeout(TIMEOUT)
        .run();
    check_success(&job, "plain io_fstream with LD_DEBUG=bindings");
    let program = exe.file_name().unwrap().to_string_lossy().into_owned();
    let mut bound = BTreeSet::new();
    for entry in std::fs::read_dir(&area.root).unwrap().flatten() {
        if !entry.file_name().to_string_lossy().starts_with("ld.") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        if !text.contains(&program) {
            continue; // the launcher's own bindings
        }
        for line in text.lines() {
            let Some((from, to)) = line.split_once(" to ") else {
                continue;
            };
            if from.contains("binding file")
                && from.contains("libstdc++.so")
                && to.contains("libc.so")
            {
                if let Some(symbol) = to.split('`').nth(1).and_then(|s| s.split('\'').next()) {
                    bound.insert(symbol.to_string());
                }
            }
        }
    }
    let needed = [
        "fopen64", "fileno", "read", "write", "writev", "lseek64", "fclose",
    ];
    let missing: Vec<&str> = needed
        .iter()
        .copied()
        .filter(|s| !bound.contains(*s))
        .collect();
    assert!(
        missing.is_empty(),
        "libstdc++ did not call {missing:?}; it bound: {bound:?}"
    );
    for unexpected in ["fwrite", "fread", "fputs", "fgets", "fprintf"] {
        assert!(
            !bound.contains(unexpected),
            "libstdc++ called {unexpected}: the streams use stdio for data after all: {bound:?}"
        );
    }
}
