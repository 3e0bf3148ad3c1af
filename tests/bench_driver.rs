//! `redio bench` end to end: a short sweep of each family on a local
//! directory under a real mpiexec produces the CSV, JSON and Markdown
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
        assert_eq!(fields.len(), 10, "{row}");
        let rate: f64 = fields[8].parse().unwrap();
        assert!(rate > 0.0, "{row}");
        assert_eq!(fields[9], "", "no --traffic, no bytes on the wire: {row}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(json["samples"].as_array().unwrap().len(), rows.len());
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

/// Runs `redio bench --family FAMILY` on a fresh directory with `args`;
/// returns the CSV rows, the Markdown table and the output directory.
fn family(family: &str, args: &[&str]) -> (Vec<Vec<String>>, String, std::path::PathBuf) {
    let dir = common::fresh_dir(&format!("bench-{family}"));
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let out = dir.join("out");
    let result = Command::new(env!("CARGO_BIN_EXE_redio"))
        .env("REDIO_PYTHON", common::repo().join(".venv/bin/python"))
        .args(["bench", "--mpi", "mpich", "--family", family, "--dir"])
        .arg(&data)
        .args(args)
        .args(["--timeout-seconds", "60", "--plot", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&result.stdout);
    assert!(
        result.status.success(),
        "redio bench --family {family} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
    // The benchmark cleans up after itself: nothing is left in --dir.
    let left: Vec<_> = std::fs::read_dir(&data).unwrap().collect();
    assert!(
        left.is_empty(),
        "left behind in {}: {left:?}",
        data.display()
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let rows = csv
        .lines()
        .skip(1)
        .map(|row| row.split(',').map(str::to_string).collect::<Vec<_>>())
        .collect::<Vec<_>>();
    for row in &rows {
        assert_eq!(row.len(), 10, "{row:?}");
        assert!(row[8].parse::<f64>().unwrap() > 0.0, "{row:?}");
    }
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    (rows, md, out)
}

/// The (mode, variant) pairs of the rows, each once, sorted.
fn kinds(rows: &[Vec<String>]) -> Vec<(String, String)> {
    let mut kinds: Vec<_> = rows.iter().map(|r| (r[2].clone(), r[3].clone())).collect();
    kinds.sort();
    kinds.dedup();
    kinds
}

fn assert_png(out: &std::path::Path, name: &str) {
    let bytes = std::fs::read(out.join(name)).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"), "{name} is not a PNG");
}

#[test]
fn the_interposition_family_compares_pass_through_with_native_runs() {
    let (rows, md, out) = family(
        "interposition",
        &["--blocks", "4KiB,1MiB", "--total", "2MiB", "--reps", "2"],
    );
    // 2 blocks x 2 modes x 2 variants x 2 runs, each moving 2 MiB.
    assert_eq!(rows.len(), 16, "{rows:?}");
    assert!(rows.iter().all(|r| r[6] == "2097152"), "{rows:?}");
    let pairs = |mode: &str| {
        [
            (mode.into(), "native".into()),
            (mode.into(), "pass-through".into()),
        ]
    };
    let mut expected: Vec<(String, String)> =
        pairs("read").into_iter().chain(pairs("write")).collect();
    expected.sort();
    assert_eq!(kinds(&rows), expected);
    assert!(md.contains("| write | 4KiB | pass-through | 1 |"), "{md}");
    assert!(md.contains("| vs native |"), "{md}");
    assert!(
        md.contains("| read | 1MiB | native | 1 |") && md.contains("| 1.00 |"),
        "{md}"
    );
    assert_png(&out, "bench-read.png");
    assert_png(&out, "bench-write.png");
}

#[test]
fn the_crc_family_compares_crc32_with_a_copy_and_a_plain_read() {
    let (rows, md, out) = family(
        "crc",
        &["--blocks", "64KiB,1MiB", "--total", "8MiB", "--reps", "3"],
    );
    assert_eq!(rows.len(), 2 * 2 * 2 * 3, "{rows:?}");
    let mut expected: Vec<(String, String)> = [
        ("memory", "crc32"),
        ("memory", "memcpy"),
        ("read", "crc32"),
        ("read", "read"),
    ]
    .map(|(m, v)| (m.to_string(), v.to_string()))
    .to_vec();
    expected.sort();
    assert_eq!(kinds(&rows), expected);
    assert!(md.contains("| memory | 1MiB | crc32 | 1 |"), "{md}");
    assert_png(&out, "bench-memory.png");
    assert_machine_recorded(&md, &out);
    assert_markdown_from_json(&md, &out);
}

/// `redio bench --markdown results.json` prints the run's results.md again,
/// from the JSON: its medians are the JSON samples' medians, and a sample
/// changed in the JSON changes the table.
fn assert_markdown_from_json(md: &str, out: &std::path::Path) {
    let markdown = |path: &std::path::Path| {
        let run = Command::new(env!("CARGO_BIN_EXE_redio"))
            .args(["bench", "--markdown"])
            .arg(path)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
        assert!(
            run.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&run.stderr)
        );
        stdout
    };
    let results = out.join("results.json");
    assert_eq!(markdown(&results), md);
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    assert_eq!(json["family"], "crc");
    // The median of the memory crc32 1 MiB cell, from the samples.
    let cell = |json: &serde_json::Value| {
        let mut rates: Vec<f64> = json["samples"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["mode"] == "memory" && s["protocol"] == "crc32" && s["block"] == 1 << 20)
            .map(|s| s["total"].as_f64().unwrap() / s["seconds"].as_f64().unwrap() / 1048576.0)
            .collect();
        rates.sort_by(f64::total_cmp);
        assert_eq!(rates.len(), 3);
        format!("| memory | 1MiB | crc32 | 1 | {:.0} |", rates[1])
    };
    assert!(md.contains(&cell(&json)), "{}\n{md}", cell(&json));
    // Every run of that cell 1000 times slower: the table follows the JSON.
    for s in json["samples"].as_array_mut().unwrap() {
        if s["mode"] == "memory" && s["protocol"] == "crc32" && s["block"] == 1 << 20 {
            s["seconds"] = (s["seconds"].as_f64().unwrap() * 1000.0).into();
        }
    }
    let slower = out.join("slower.json");
    std::fs::write(&slower, json.to_string()).unwrap();
    let changed = markdown(&slower);
    assert!(changed.contains(&cell(&json)), "{}\n{changed}", cell(&json));
    assert_ne!(changed, md);
}

/// results.md begins with the machine block and results.json carries the
/// same machine, with the load at both ends of the run.
fn assert_machine_recorded(md: &str, out: &std::path::Path) {
    assert!(md.starts_with("Machine: "), "{md}");
    for part in [
        "logical cores",
        "\n- CPU features: AVX2 ",
        ", GFNI ",
        "; MPI: MPICH ",
        "\n- Run: ",
        " at start → ",
    ] {
        assert!(md.contains(part), "no {part:?} in\n{md}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let machine = &json["machine"];
    assert!(
        machine["cpu"]["logical_cores"].as_u64().unwrap() >= 1,
        "{machine}"
    );
    assert!(machine["cpu"]["features"]["avx2"].is_boolean(), "{machine}");
    assert!(machine["load_end"]["one"].is_number(), "{machine}");
    assert!(!json["samples"].as_array().unwrap().is_empty());
}

/// `redio bench --machine` prints the block alone: no directory, nothing
/// measured, every implementation asked for.
#[test]
fn the_machine_block_alone_needs_no_directory() {
    let out = Command::new(env!("CARGO_BIN_EXE_redio"))
        .args(["bench", "--machine", "--mpi", "mpich,openmpi"])
        .args(["--load-start", "0.50 0.40 0.30 1/100 42"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.starts_with("Machine: "), "{stdout}");
    assert!(
        stdout.contains("; MPI: MPICH ") && stdout.contains(", Open MPI "),
        "{stdout}"
    );
    assert!(
        stdout.contains("load average (1 min) 0.50 at start → "),
        "{stdout}"
    );
    assert_eq!(stdout.lines().count(), 4, "{stdout}");
}

#[test]
fn the_parity_family_times_encode_verify_and_a_checked_rebuild() {
    let (rows, md, out) = family(
        "parity",
        &[
            "--blocks",
            "1MiB",
            "--ranks",
            "3",
            "--schemes",
            "xor,rs:2",
            "--reps",
            "2",
        ],
    );
    // 2 schemes x 3 operations x 2 runs.
    assert_eq!(rows.len(), 12, "{rows:?}");
    for row in &rows {
        let bytes: u64 = row[6].parse().unwrap();
        // encode and verify count every rank's data; rebuild the lost
        // ranks' (1 for xor, 2 for rs:2).
        let expected = match (row[2].as_str(), row[3].as_str()) {
            ("rebuild", "xor") => 1 << 20,
            ("rebuild", _) => 2 << 20,
            _ => 3 << 20,
        };
        assert_eq!(bytes, expected, "{row:?}");
        assert_eq!(row[4], "3", "{row:?}");
    }
    assert!(md.contains("| rebuild | 1MiB | rs:2 | 3 |"), "{md}");
    assert!(md.contains("| ranks |"), "{md}");
    for plot in ["bench-encode.png", "bench-verify.png", "bench-rebuild.png"] {
        assert_png(&out, plot);
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
    assert!(run(&["--dir", d, "--mpi", "mpich,openmpi"]).contains("one implementation"));
    assert!(run(&[]).contains("--dir"));
    assert!(run(&["--machine", "--load-start", "high"]).contains("/proc/loadavg"));
    assert!(run(&["--markdown", "/nonexistent/results.json"]).contains("/nonexistent/results.json"));
    let parity = |schemes: &str, ranks: &str| {
        run(&[
            "--family",
            "parity",
            "--dir",
            d,
            "--schemes",
            schemes,
            "--ranks",
            ranks,
        ])
    };
    assert!(parity("rs:3", "3").contains("must be larger than the losses"));
    assert!(parity("raid5", "4").contains("use single, partner:C, xor or rs:K"));
    assert!(parity("xor", "1").contains("at least 2"));
}

/// `--read ''` measures writes alone (no seed file, no read rows).
#[test]
fn an_empty_protocol_list_skips_that_mode() {
    let (rows, _, out) = family(
        "protocols",
        &[
            "--read",
            "",
            "--write",
            "simple",
            "--degrees",
            "2",
            "--blocks",
            "64KiB",
            "--total",
            "256KiB",
            "--reps",
            "1",
        ],
    );
    assert_eq!(
        kinds(&rows),
        [
            ("write".to_string(), "none".to_string()),
            ("write".to_string(), "simple".to_string())
        ],
        "{rows:?}"
    );
    assert_png(&out, "bench-write.png");
    assert!(!out.join("bench-read.png").exists());
}
