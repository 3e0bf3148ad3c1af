//! `redio bench` end to end: a short sweep on a local directory under a real
//! mpiexec produces the calibration line, the CSV, JSON and Markdown
//! results with one row per run, and the plots.

mod common;

use std::process::Command;

#[test]
fn a_short_sweep_produces_results_and_plots() {
    let dir = common::fresh_dir("bench-driver");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let out = dir.join("out");
    let python = common::repo().join(".venv/bin/python");
    let result = Command::new(env!("CARGO_BIN_EXE_redio"))
        .env("REDIO_PYTHON", &python)
        .args(["bench", "--mpi", "mpich", "--dir"])
        .arg(&data)
        .args(["--read", "distributed-chunked", "--write", "distributed"])
        .args([
            "--degrees",
            "1,2",
            "--blocks",
            "64KiB,1MiB",
            "--total",
            "2MiB",
        ])
        .args([
            "--chunk",
            "256KiB",
            "--reps",
            "2",
            "--timeout-seconds",
            "60",
            "--plot",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&result.stdout);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        result.status.success(),
        "redio bench failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.starts_with("calibration: local (1 client"),
        "{stdout}"
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    // 2 modes x 2 blocks x (None r=1 + 1 protocol x 2 degrees) x 2 runs.
    assert_eq!(rows.len(), 2 * 2 * 3 * 2, "{csv}");
    for row in &rows {
        let fields: Vec<&str> = row.split(',').collect();
        assert_eq!(fields.len(), 9, "{row}");
        let rate: f64 = fields[8].parse().unwrap();
        assert!(rate > 0.0, "{row}");
    }
    let json = std::fs::read_to_string(out.join("results.json")).unwrap();
    assert_eq!(json.matches("\"protocol\"").count(), rows.len());
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert!(
        md.contains("| read | 1MiB | distributed-chunked | 2 |"),
        "{md}"
    );
    for plot in ["bench-read.png", "bench-write.png"] {
        let bytes = std::fs::read(out.join(plot)).unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "{plot} is not a PNG");
    }
}

#[test]
fn bad_arguments_are_refused_with_the_reason() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_redio"))
            .arg("bench")
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let dir = common::fresh_dir("bench-driver-bad");
    let d = dir.to_str().unwrap();
    assert!(run(&["--dir", d, "--degrees", "4"]).contains("each must be 1, 2 or 3"));
    assert!(run(&["--dir", d, "--blocks", "lots"]).contains("--blocks \"lots\""));
    assert!(run(&["--dir", "/nonexistent/x"]).contains("not a directory"));
    assert!(run(&["--dir", d, "--replica-dir", "/tmp/r"]).contains("{replica}"));
}
