//! Environment that makes the start-up of the collective parity workers
//! cheaper, measured on these machines (docs/benchmarks.md, "Start-up of
//! the parity commands"). Each setting stays out when the user set the
//! variable themselves. (MPICH's shared-memory setting is the workers'
//! own decision: `lifecycle::parity_worker` in the preload asks the MPI
//! library they loaded, at no cost, where the CLI would have to run
//! `mpichversion` on the job's critical path.)

/// hwloc's components that discover I/O devices (PCI through sysfs, or
/// through libpciaccess when that one is off), left out of the workers'
/// topology: reading each device's PCI configuration space traps to the
/// hypervisor on a VM, which cost a 4-rank launch 0.06 s of its 0.18 s
/// under MPICH and 0.11 s of 0.44 s under Open MPI 4.1. The workers bind
/// nothing and pick no NIC, so they need no I/O topology.
const HWLOC_WITHOUT_IO: &str = "-linuxio,-pci";

/// Variables for a collective parity job, given the user's environment:
/// set for the workers (through the launcher's own option) and for the
/// launcher process itself (Open MPI's discovers the node's topology too).
pub(super) fn startup_env() -> Vec<(String, String)> {
    hwloc_components(std::env::var_os("HWLOC_COMPONENTS"))
        .into_iter()
        .collect()
}

/// The variable and value that keep hwloc's I/O discovery out of the job,
/// unless the user chose hwloc's components (`user`: their
/// `HWLOC_COMPONENTS`), which stays as it is.
fn hwloc_components(user: Option<std::ffi::OsString>) -> Option<(String, String)> {
    match user {
        Some(_) => None,
        None => Some(("HWLOC_COMPONENTS".into(), HWLOC_WITHOUT_IO.into())),
    }
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
}
