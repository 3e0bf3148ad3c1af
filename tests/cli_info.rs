//! `redio info`: the class of each path and the rule that decided it.

use std::process::Command;

#[test]
fn info_reports_class_file_system_and_reason() {
    let dir = std::env::temp_dir().join(format!("redio-info-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("scratch")).unwrap();
    let config = dir.join("redio.yaml");
    std::fs::write(
        &config,
        format!(
            "version: 1\nshared:\n  paths: [{}]\nlocal:\n  paths: [{}]\nio:\n  rules:\n    - {{path: \"*.dat\", write: none}}\n",
            dir.join("scratch").display(),
            dir.join("scratch/tmp").display()
        ),
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_redio"))
        .arg("info")
        .arg(dir.join("scratch/out.dat")) // does not exist yet: its parent does
        .arg(dir.join("scratch/tmp/x"))
        .arg("/proc/self/status")
        .arg(&config)
        .env("REDIO_CONFIG", &config)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<Vec<&str>> = stdout
        .lines()
        .skip(1)
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("MPI-IO") && stderr.contains("docs/io-stacks.md"),
        "redio info says how MPI-IO is handled: {stderr}"
    );
    // Columns: path, class, file system, read protocol, write protocol.
    assert_eq!(lines[0][1], "shared", "{stdout}");
    assert_eq!(
        lines[0][3..5],
        ["simple", "none"],
        "rule for *.dat: {stdout}"
    );
    assert!(stdout
        .lines()
        .nth(1)
        .unwrap()
        .contains("under shared.paths entry"));
    assert!(
        stdout
            .lines()
            .nth(1)
            .unwrap()
            .contains("io.rules[0] (*.dat) applies"),
        "{stdout}"
    );
    assert_eq!(lines[1][1], "local", "local.paths wins: {stdout}");
    assert_eq!(lines[2][1..5], ["system", "proc", "-", "-"], "{stdout}");
    assert_eq!(lines[3][1], "local", "{stdout}");
    assert!(
        stdout
            .lines()
            .nth(4)
            .unwrap()
            .contains("is not in shared.fs_types"),
        "{stdout}"
    );
}
