//! Environment that makes the start-up of the collective parity workers
//! cheaper, measured on these machines (docs/benchmarks.md, "Start-up of
//! the parity commands"). Each setting stays out when the user set the
//! variable themselves.

use super::flavour::Flavour;
use std::ffi::OsString;
use std::process::{Child, Command, Stdio};

/// hwloc's components that discover I/O devices (PCI through sysfs, or
/// through libpciaccess when that one is off), left out of the workers'
/// topology: reading each device's PCI configuration space traps to the
/// hypervisor on a VM, which cost a 4-rank launch 0.06 s of its 0.18 s
/// under MPICH and 0.11 s of 0.44 s under Open MPI 4.1. The workers bind
/// nothing and pick no NIC, so they need no I/O topology.
const HWLOC_WITHOUT_IO: &str = "-linuxio,-pci";

/// MPICH's variable that makes every process treat the others as remote:
/// no shared-memory segment at start-up, every message through the
/// network module. Under ch4:ucx, UCX still moves a node's messages
/// through shared memory and cross-memory attach. What it saves: MPICH
/// 4.0.2 sets up that segment with barriers that spin without yielding,
/// so with more workers than cores the waiting ranks keep the late ones
/// off the cores (a 4-rank launch on 2 cores: 35% of the first 100 ms in
/// that spin; 0.133 → 0.061 s wall, 0.235 → 0.102 CPU-seconds).
const MPICH_NOLOCAL: &str = "MPIR_CVAR_NOLOCAL";

/// The MPICH device under which [`MPICH_NOLOCAL`] was measured. Other
/// devices may send a node's messages over TCP instead: left alone.
const NOLOCAL_DEVICE: &str = "ch4:ucx";

/// Variables for the launcher and the workers of a collective parity job.
pub(super) struct StartupEnv {
    /// Set for the workers (through the launcher's own option).
    pub(super) workers: Vec<(String, String)>,
    /// Set for the launcher process itself (Open MPI's discovers the
    /// node's topology too).
    pub(super) launcher: Vec<(String, String)>,
}

/// The start-up settings of a job, found out beside the job's own
/// preparation: [`StartupProbe::start`] runs `mpichversion` (about 4 ms)
/// in the background, [`StartupProbe::finish`] reads its answer.
pub(super) struct StartupProbe {
    flavour: Flavour,
    /// `mpichversion`, when its answer decides [`MPICH_NOLOCAL`].
    mpichversion: Option<Child>,
}

impl StartupProbe {
    /// Starts what the settings of a job of `flavour` depend on.
    pub(super) fn start(flavour: Flavour) -> Self {
        let asks = flavour == Flavour::Mpich && std::env::var_os(MPICH_NOLOCAL).is_none();
        let mpichversion = asks
            .then(|| {
                Command::new("mpichversion")
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .spawn()
                    .ok()
            })
            .flatten();
        StartupProbe {
            flavour,
            mpichversion,
        }
    }

    /// The settings, given the user's environment.
    pub(super) fn finish(self) -> StartupEnv {
        let hwloc = hwloc_components(std::env::var_os("HWLOC_COMPONENTS"));
        let mut workers: Vec<(String, String)> = hwloc.clone().into_iter().collect();
        if self.flavour == Flavour::Mpich {
            let child = self.mpichversion;
            workers.extend(mpich_nolocal(std::env::var_os(MPICH_NOLOCAL), || {
                mpich_device(child?)
            }));
        }
        StartupEnv {
            workers,
            launcher: hwloc.into_iter().collect(),
        }
    }
}

/// The variable and value that keep hwloc's I/O discovery out of the job,
/// unless the user chose hwloc's components (`user`: their
/// `HWLOC_COMPONENTS`), which stays as it is.
fn hwloc_components(user: Option<OsString>) -> Option<(String, String)> {
    match user {
        Some(_) => None,
        None => Some(("HWLOC_COMPONENTS".into(), HWLOC_WITHOUT_IO.into())),
    }
}

/// [`MPICH_NOLOCAL`] for an MPICH whose device (asked of `device` only
/// when the user did not set the variable: `user`) is [`NOLOCAL_DEVICE`].
fn mpich_nolocal(
    user: Option<OsString>,
    device: impl FnOnce() -> Option<String>,
) -> Option<(String, String)> {
    if user.is_some() {
        return None;
    }
    (device()?.as_str() == NOLOCAL_DEVICE).then(|| (MPICH_NOLOCAL.into(), "1".into()))
}

/// The device `mpichversion` (on the `PATH`, as `mpiexec.mpich`) reports,
/// if it ran.
fn mpich_device(child: Child) -> Option<String> {
    let out = child.wait_with_output().ok()?;
    out.status
        .success()
        .then(|| device_line(&String::from_utf8_lossy(&out.stdout)))
        .flatten()
}

/// The value of the `MPICH Device:` line of `mpichversion`'s output.
fn device_line(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("MPICH Device:"))
        .map(|d| d.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_discovery_is_left_out_unless_the_user_chose_components() {
        assert_eq!(
            hwloc_components(None),
            Some(("HWLOC_COMPONENTS".into(), "-linuxio,-pci".into()))
        );
        assert_eq!(hwloc_components(Some("-pci".into())), None);
        assert_eq!(hwloc_components(Some("".into())), None);
    }

    #[test]
    fn mpich_goes_without_shared_memory_only_under_ucx_and_unless_the_user_chose() {
        let ucx = || Some("ch4:ucx".to_string());
        assert_eq!(
            mpich_nolocal(None, ucx),
            Some(("MPIR_CVAR_NOLOCAL".into(), "1".into()))
        );
        assert_eq!(mpich_nolocal(Some("0".into()), ucx), None);
        assert_eq!(mpich_nolocal(None, || Some("ch4:ofi".into())), None);
        assert_eq!(mpich_nolocal(None, || Some("ch3:nemesis".into())), None);
        assert_eq!(mpich_nolocal(None, || None), None);
    }

    #[test]
    fn the_device_is_read_from_mpichversion_output() {
        let text =
            "MPICH Version:    \t4.0.2\nMPICH Device:    \tch4:ucx\nMPICH configure: \t--x\n";
        assert_eq!(device_line(text).as_deref(), Some("ch4:ucx"));
        assert_eq!(device_line("nothing here"), None);
    }
}
