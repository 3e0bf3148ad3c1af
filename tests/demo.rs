//! `scripts/demo.sh`, the README's first command, runs as a user would
//! and passes its own checks: a replica killed half-way is survived (exit
//! 0, the death in the summary, every survivor's output and the result
//! file identical to the plain run's), and a rank's checkpoint deleted
//! after the run is rebuilt from parity byte for byte. The script exits
//! non-zero when any of them fails.

mod common;

use std::process::Command;

#[test]
fn the_demo_survives_a_death_and_rebuilds_a_lost_checkpoint() {
    let _machine = common::launch_lock();
    let dir = common::fresh_dir("demo");
    let out = Command::new("timeout")
        .arg("300")
        .arg(common::repo().join("scripts/demo.sh"))
        // The CLI under test; setup and build are the suite's.
        .env("REDIO_DEMO_REDIO", common::redio_bin())
        .env("REDIO_DEMO_DIR", &dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "demo failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.trim_end().ends_with(&format!(
            "demo: every check passed; files in {}/",
            dir.display()
        )),
        "{stdout}"
    );
    assert!(!stdout.contains("FAILED"), "{stdout}");
    for claim in [
        "ok: redio run exited 0",
        "ok: the summary names world rank 2 as the one death",
        "ok: replica 0 printed what the plain run printed",
        "ok: replica 2 printed what the plain run printed",
        "is identical to the plain run's\n",
        "ok: redio parity rebuild exited 0",
        "ok: the rebuilt ",
    ] {
        assert!(stdout.contains(claim), "no {claim:?} in\n{stdout}");
    }
    // The rebuilt checkpoint is there, equal to the plain run's.
    assert_eq!(
        std::fs::read(dir.join("local/r0/rank1/heat.ckpt")).unwrap(),
        std::fs::read(dir.join("plain/local/rank1/heat.ckpt")).unwrap()
    );
}
