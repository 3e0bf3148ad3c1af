//! `redio config check` and `redio config show`, run as a user would.

use std::path::PathBuf;
use std::process::{Command, Output};

fn redio(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_redio"));
    command.args(args);
    // Only this test's REDIO_* variables: the caller's must not leak in.
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("REDIO_") {
            command.env_remove(name);
        }
    }
    command.envs(env.iter().copied());
    command.output().unwrap()
}

fn example(name: &str) -> String {
    format!("{}/configs/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn scratch_file(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("redio-config-cli-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn check_accepts_a_valid_file() {
    let file = example("minimal.yaml");
    let out = redio(&["config", "check", &file], &[]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{file}: ok\n")
    );
    assert!(out.stderr.is_empty());
}

#[test]
fn check_prints_every_problem_and_fails() {
    let path = scratch_file(
        "bad.yaml",
        "version: 1\nreplication:\n  degree: 4\nio:\n  write: fast\n",
    );
    let file = path.display().to_string();
    let out = redio(&["config", "check", &file], &[]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "{file}:3:11: replication.degree: 4 is out of range (allowed: 1 to 3)\n\
             {file}:5:10: io.write: unknown protocol \"fast\" (expected one of: none, simple, distributed, distributed-separate, auto)\n"
        )
    );
}

#[test]
fn check_of_a_missing_file_fails_clearly() {
    let out = redio(&["config", "check", "/nonexistent/x.yaml"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "/nonexistent/x.yaml: cannot read the configuration file: No such file or directory (os error 2)\n"
    );
}

#[test]
fn show_prints_the_resolved_configuration() {
    let file = example("triple-redundancy.yaml");
    let out = redio(
        &["config", "show", "--config", &file],
        &[("REDIO_LOG_LEVEL", "debug")],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let yaml = String::from_utf8_lossy(&out.stdout);
    let shown = redio::config::Config::from_yaml_str(&yaml, "shown", &|_| None).unwrap();
    assert_eq!(shown.replication.degree, 3);
    assert_eq!(shown.log.level, redio::config::LogLevel::Debug);
}

#[test]
fn show_reports_misspelled_variables() {
    let out = redio(&["config", "show"], &[("REDIO_REPLICATION_DEGRE", "3")]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("REDIO_REPLICATION_DEGRE=3: unknown setting replication.degre"),
        "{stderr}"
    );
    assert!(
        stderr.contains("did you mean REDIO_REPLICATION_DEGREE?"),
        "{stderr}"
    );
}

/// `redio ARGS` with `env`, killed after 20 s: `None` if it hung.
fn redio_within(args: &[&str], env: &[(&str, &str)]) -> Option<Output> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_redio"));
    command.args(args).envs(env.iter().copied());
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Arguments, environment, and what the message must name.
type Run<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);

#[test]
fn a_fifo_or_a_device_as_the_configuration_is_refused_without_hanging() {
    let fifo = std::env::temp_dir().join(format!("redio-config-cli-{}-fifo", std::process::id()));
    let _ = std::fs::remove_file(&fifo);
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let fifo = fifo.to_str().unwrap();
    let runs: [Run; 5] = [
        (&["config", "check", fifo], &[], "FIFO"),
        (&["config", "show", "--config", fifo], &[], "FIFO"),
        (&["config", "show"], &[("REDIO_CONFIG", fifo)], "FIFO"),
        (&["config", "check", "/dev/zero"], &[], "character device"),
        (
            &["config", "show"],
            &[("REDIO_CONFIG", "/dev/urandom")],
            "character device",
        ),
    ];
    for (args, env, what) in runs {
        let out = redio_within(args, env).unwrap_or_else(|| panic!("{args:?} {env:?} hangs"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(what), "{args:?}: {stderr}");
        assert!(stderr.contains("regular file"), "{args:?}: {stderr}");
    }
    std::fs::remove_file(fifo).unwrap();
}

#[test]
fn an_environment_value_that_is_not_utf8_is_reported() {
    use std::os::unix::ffi::OsStrExt;
    let mut command = Command::new(env!("CARGO_BIN_EXE_redio"));
    command
        .args(["config", "show"])
        .env_remove("REDIO_CONFIG")
        .env("REDIO_LOG_LEVEL", std::ffi::OsStr::from_bytes(b"\xff"));
    let out = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("REDIO_LOG_LEVEL="), "{stderr}");
    assert!(stderr.contains("log.level: unknown level"), "{stderr}");
}

#[test]
fn a_huge_document_says_what_is_wrong_in_words() {
    let items = vec!["1"; 260_000].join(",");
    let file = scratch_file("huge.yaml", &format!("version: 1\nx: [{items}]\n"));
    let out = redio(&["config", "check", file.to_str().unwrap()], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("has 250001 nodes"), "{stderr}");
    assert!(stderr.contains("is this the right file?"), "{stderr}");
    assert!(!stderr.contains("Nodes {"), "{stderr}");
    std::fs::remove_file(file).unwrap();
}
