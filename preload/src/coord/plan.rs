//! A shared file's plan: the protocols, with their parameters, and the
//! voting policy the configuration gives it when it is opened. The
//! translation itself is the core crate's, unit-tested there
//! ([`redio_core::plan`]); this adds what only the running job knows
//! (the configuration broadcast, the replica count).

use crate::coord::target::Target;
use crate::state::{settings, world};
use redio_core::plan;
use redio_protocols::Placement;

pub use redio_core::plan::FilePlan;

/// The plan of `target` opened with `flags` (the default plan before a
/// configuration is known).
pub fn plan_for(target: &Target, flags: i32) -> FilePlan {
    let Some(config) = settings::get() else {
        return FilePlan::default();
    };
    let io = target.io(config, Some(plan::open_mode(flags)));
    let placement = if target.per_replica {
        Placement::Separate
    } else {
        Placement::Shared
    };
    plan::file(&io, placement, world::identity().map_or(1, |i| i.degree))
}

#[cfg(test)]
mod tests {
    use super::*;
    use redio_protocols::{Policy, ReadProtocol, WriteProtocol};

    #[test]
    fn without_a_configuration_a_file_is_read_and_written_simply_with_voting() {
        let target = Target {
            path: "/shared/f".into(),
            app_path: "/shared/f".into(),
            c_path: c"/shared/f".into(),
            fs_type: Some("nfs".into()),
            per_replica: false,
        };
        let plan = plan_for(&target, libc::O_WRONLY);
        assert_eq!(plan.read, ReadProtocol::Simple);
        assert_eq!(plan.write, WriteProtocol::Simple);
        assert_eq!(plan.policy, Policy::default());
        assert!(!plan.separate);
    }
}
