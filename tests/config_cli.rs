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
