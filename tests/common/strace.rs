//! The bytes that really reach shared files, counted from outside: every
//! process of a job runs under `strace -ff -y`, and the byte counts that
//! successful write calls return are summed per file.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The write system calls that can put bytes into a file.
pub const TRACED: [&str; 5] = ["write", "pwrite64", "writev", "pwritev", "pwritev2"];

/// `strace … -o <dir>/t` before the program: one trace file per process
/// and thread (`-ff`), fds shown with their paths (`-y`), no data (`-s 0`).
pub fn strace_prefix(dir: &Path) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    let mut args: Vec<String> = [
        "-f",
        "-ff",
        "--seccomp-bpf",
        "-y",
        "-s",
        "0",
        "-e",
        &format!("trace={}", TRACED.join(",")),
        "-o",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(dir.join("t").display().to_string());
    args
}

/// Sums, per file under `shared`, the byte counts returned by successful
/// write calls in the traces under `dir`. Lines look like
/// `pwrite64(5</area/shared/posix.0.dat>, ""..., 500, 1500) = 500`.
pub fn written_bytes(dir: &Path, shared: &Path) -> BTreeMap<String, u64> {
    let prefix = format!("{}/", shared.display());
    let mut bytes = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap();
        // An interrupted call: `write(3</p>, ""..., 10 <unfinished ...>`,
        // then `<... write resumed>) = 10`.
        let mut pending: HashMap<String, String> = HashMap::new();
        for line in text.lines() {
            let path = if let Some(rest) = line.strip_prefix("<... ") {
                let call = rest.split(' ').next().unwrap_or("");
                match pending.remove(call) {
                    Some(path) => path,
                    None => continue,
                }
            } else {
                let Some((call, rest)) = line.split_once('(') else {
                    continue;
                };
                if !TRACED.contains(&call) {
                    continue;
                }
                let Some((fd, after)) = rest.split_once('<') else {
                    continue;
                };
                if fd.is_empty() || !fd.chars().all(|c| c.is_ascii_digit()) {
                    continue;
                }
                let Some((path, _)) = after.split_once(">, ") else {
                    continue;
                };
                let path = path.trim_end_matches(" (deleted)").to_string();
                if line.ends_with("<unfinished ...>") {
                    pending.insert(call.to_string(), path);
                    continue;
                }
                path
            };
            let Some(name) = path.strip_prefix(&prefix) else {
                continue;
            };
            let Some((_, result)) = line.rsplit_once(") = ") else {
                continue;
            };
            let count: i64 = result
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(-1);
            if count > 0 {
                *bytes.entry(name.to_string()).or_insert(0) += count as u64;
            }
        }
    }
    bytes
}
