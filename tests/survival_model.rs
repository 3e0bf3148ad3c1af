//! The survival model of docs/fault-tolerance.md ("Survival rule"):
//! `benches/survival_model.py --check` replays random failure orders
//! through each survival rule and must agree with the closed forms the docs
//! quote (and with the sqrt(pi N)/3 gain of the rank rule at r=2).

mod common;

use std::process::Command;

#[test]
fn the_survival_model_agrees_with_its_closed_forms() {
    let python = common::repo().join(".venv/bin/python");
    let out = Command::new(&python)
        .arg(common::repo().join("benches/survival_model.py"))
        .args(["--check", "--trials", "2000"])
        .output()
        .expect("run benches/survival_model.py with the project venv (scripts/setup.sh)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "survival model check failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 16 Monte Carlo points and 3 asymptote points, none of them BAD.
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count(),
        19,
        "{stdout}"
    );
    assert!(!stdout.contains("BAD"), "{stdout}");
}
