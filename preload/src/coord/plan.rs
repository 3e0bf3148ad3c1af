//! A shared file's plan: the protocols, with their parameters, and the
//! voting policy the configuration gives it when it is opened.

use crate::coord::target::Target;
use crate::state::{settings, world};
use redio_core::config;
use redio_protocols::{OnMismatch, Placement, Policy, ReadProtocol, WriteProtocol};

/// The settings of one opened file.
pub struct FilePlan {
    /// How reads are coordinated.
    pub read: ReadProtocol,
    /// How writes are coordinated.
    pub write: WriteProtocol,
    /// Checksums and the mismatch policy.
    pub policy: Policy,
    /// Distributed Separate Write: `write` is Distributed Write into part files.
    pub separate: bool,
}

/// The protocols, with their parameters, and the policy for `resolved`
/// opened with `flags`.
pub fn plan_for(resolved: &Target, flags: i32) -> FilePlan {
    let Some(config) = settings::get() else {
        return FilePlan {
            read: ReadProtocol::Simple,
            write: WriteProtocol::Simple,
            policy: Policy::default(),
            separate: false,
        };
    };
    let mode = match flags & libc::O_ACCMODE {
        libc::O_WRONLY => config::OpenMode::Write,
        libc::O_RDWR => config::OpenMode::ReadWrite,
        _ => config::OpenMode::Read,
    };
    let io = resolved.io(config, Some(mode));
    let chunk = usize::try_from(io.chunk_size).unwrap_or(usize::MAX);
    let placement = if resolved.per_replica {
        Placement::Separate
    } else {
        Placement::Shared
    };
    let read = match io.read {
        config::ReadProtocol::None => ReadProtocol::None,
        config::ReadProtocol::Simple => ReadProtocol::Simple,
        config::ReadProtocol::ExtendedSimple => ReadProtocol::ExtendedSimple {
            readers: io.readers as usize,
        },
        config::ReadProtocol::ReadDistribute => ReadProtocol::ReadDistribute,
        config::ReadProtocol::Chained => ReadProtocol::Chained,
        config::ReadProtocol::ChunkedChained => ReadProtocol::ChunkedChained { chunk },
        config::ReadProtocol::DistributedChunked => ReadProtocol::DistributedChunked { chunk },
        config::ReadProtocol::Auto => ReadProtocol::Auto { chunk, placement },
    };
    let write = match io.write {
        config::WriteProtocol::None => WriteProtocol::None,
        config::WriteProtocol::Simple => WriteProtocol::Simple,
        config::WriteProtocol::Distributed => WriteProtocol::Distributed { chunk },
        config::WriteProtocol::Auto => WriteProtocol::Auto { chunk, placement },
        config::WriteProtocol::DistributedSeparate => WriteProtocol::Distributed { chunk },
    };
    let on_mismatch = match io.on_mismatch {
        config::OnMismatch::Correct => OnMismatch::Correct,
        config::OnMismatch::Error => OnMismatch::Error,
        config::OnMismatch::Abort => OnMismatch::Abort,
        config::OnMismatch::Warn => OnMismatch::Warn,
    };
    let policy = Policy {
        checksums: io.voting,
        on_mismatch,
    };
    FilePlan {
        read,
        write,
        policy,
        // With one replica there is nothing to split: a part and a join
        // would only copy every byte once more.
        separate: io.write == config::WriteProtocol::DistributedSeparate
            && world::identity().is_some_and(|i| i.degree > 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
