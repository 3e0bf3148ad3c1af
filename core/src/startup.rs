//! Facts about one replicated job that the runtime exchanges and reports.
//!
//! The MPI-free half of the start-up in `libredio.so`: the bootstrap packet
//! world rank 0 broadcasts, the topology of an externally replicated job,
//! and the start-up line. Kept here so it is unit-tested without MPI.

use crate::topology::{Topology, TopologyError};

/// What world rank 0 broadcasts to every process at `MPI_Init`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bootstrap {
    /// The resolved configuration (YAML) and the map file's text, if any.
    Ready {
        /// `Config::to_yaml()` of the configuration rank 0 resolved.
        config_yaml: String,
        /// Contents of the replica map file (empty when there is none).
        map_text: String,
        /// This run's identity, random, chosen by world rank 0: names the
        /// run's Distributed Separate Write parts (`join::rank_part_path`),
        /// so a run never takes another run's parts for its own.
        run: u64,
    },
    /// Rank 0 could not load the configuration: every rank stops with this.
    Failed(String),
}

impl Bootstrap {
    /// Serialises the packet: a tag byte, then length-prefixed strings.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Bootstrap::Ready {
                config_yaml,
                map_text,
                run,
            } => {
                out.push(b'R');
                push_str(&mut out, config_yaml);
                push_str(&mut out, map_text);
                out.extend_from_slice(&run.to_le_bytes());
            }
            Bootstrap::Failed(message) => {
                out.push(b'F');
                push_str(&mut out, message);
            }
        }
        out
    }

    /// Parses a packet made by [`Bootstrap::encode`].
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        let (tag, mut rest) = bytes
            .split_first()
            .ok_or("empty bootstrap packet from world rank 0")?;
        match tag {
            b'R' => {
                let config_yaml = take_str(&mut rest)?;
                let map_text = take_str(&mut rest)?;
                let run = rest
                    .first_chunk::<8>()
                    .ok_or("truncated bootstrap packet from world rank 0")?;
                Ok(Bootstrap::Ready {
                    config_yaml,
                    map_text,
                    run: u64::from_le_bytes(*run),
                })
            }
            b'F' => Ok(Bootstrap::Failed(take_str(&mut rest)?)),
            other => Err(format!("bootstrap packet has unknown tag {other:#x}")),
        }
    }
}

fn push_str(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

fn take_str(rest: &mut &[u8]) -> Result<String, String> {
    let truncated = || "truncated bootstrap packet from world rank 0".to_string();
    let (len, tail) = rest.split_first_chunk::<8>().ok_or_else(truncated)?;
    let len = usize::try_from(u64::from_le_bytes(*len)).map_err(|_| truncated())?;
    if tail.len() < len {
        return Err(truncated());
    }
    let (text, tail) = tail.split_at(len);
    *rest = tail;
    String::from_utf8(text.to_vec()).map_err(|_| "bootstrap packet is not UTF-8".to_string())
}

/// Builds the topology of an externally replicated job.
///
/// `claims[w]` is what world rank `w` found in its environment: its replica
/// and, optionally, its logical rank. A missing logical rank defaults to the
/// process's position among the world ranks of the same replica, so that an
/// MPMD launch (`mpiexec -n 2 -env REDIO_EXTERNAL_REPLICA 0 app : -n 2 -env
/// REDIO_EXTERNAL_REPLICA 1 app`) needs one variable per replica only.
pub fn external_topology(claims: &[(u32, Option<u32>)]) -> Result<Topology, TopologyError> {
    let degree = claims.iter().map(|c| c.0 + 1).max().unwrap_or(0);
    let mut seen_per_replica = vec![0u32; degree as usize];
    let mut map = String::new();
    for (world, (replica, rank)) in claims.iter().enumerate() {
        let position = &mut seen_per_replica[*replica as usize];
        let rank = rank.unwrap_or(*position);
        *position += 1;
        map.push_str(&format!("{world} {replica} {rank}\n"));
    }
    Topology::from_map_text(&map, claims.len() as u32, degree)
}

/// Short name and version of the MPI library, from the text of
/// `MPI_Get_library_version` (e.g. `MPICH 4.0.2`, `Open MPI 4.1.4`).
pub fn library_name(version_text: &str) -> String {
    let first = version_text.lines().next().unwrap_or("").trim();
    if let Some(version) = first.strip_prefix("MPICH Version:") {
        format!("MPICH {}", version.trim())
    } else if let Some(rest) = first.strip_prefix("Open MPI v") {
        format!("Open MPI {}", rest.split(',').next().unwrap_or(rest).trim())
    } else {
        first.to_string()
    }
}

/// The device an MPICH library was built with (`ch4:ucx`, `ch4:ofi`,
/// `ch3:nemesis`), from the `MPICH Device:` line of the text of
/// `MPI_Get_library_version`; `None` for other libraries.
pub fn mpich_device(version_text: &str) -> Option<&str> {
    version_text
        .lines()
        .find_map(|l| l.strip_prefix("MPICH Device:"))
        .map(str::trim)
}

/// The shape of a job, e.g. `6 processes = 2 ranks x 3 replicas`.
pub fn shape(world_size: u32, ranks: u32, degree: u32) -> String {
    let count = |n: u32, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "{} = {} x {}",
        count(world_size, "process", "processes"),
        count(ranks, "rank", "ranks"),
        count(degree, "replica", "replicas"),
    )
}

/// A byte count for people: `512 B`, `4.0 KiB`, `1.5 MiB`, `2.0 GiB`.
pub fn bytes(count: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if count < 1024 {
        return format!("{count} B");
    }
    let mut value = count as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// The line world rank 0 prints at start-up, e.g.
/// `redio: 6 processes = 2 ranks x 3 replicas (block), MPICH 4.0.2`.
pub fn startup_line(topology: &Topology, how: &str, library: &str) -> String {
    format!(
        "redio: {} ({how}), {library}",
        shape(topology.world_size(), topology.ranks(), topology.degree())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::LayoutKind;

    #[test]
    fn bootstrap_round_trips() {
        for packet in [
            Bootstrap::Ready {
                config_yaml: "version: 1\n".into(),
                map_text: "0 0 0\n".into(),
                run: 0x0123_4567_89ab_cdef,
            },
            Bootstrap::Ready {
                config_yaml: String::new(),
                map_text: String::new(),
                run: 0,
            },
            Bootstrap::Failed("cfg.yaml:3:9: bad".into()),
        ] {
            assert_eq!(Bootstrap::decode(&packet.encode()), Ok(packet));
        }
    }

    #[test]
    fn damaged_bootstrap_is_an_error_not_a_panic() {
        let failed = Bootstrap::Failed("x".repeat(40)).encode();
        let ready = Bootstrap::Ready {
            config_yaml: "version: 1\n".into(),
            map_text: String::new(),
            run: 9,
        }
        .encode();
        for good in [failed, ready] {
            for cut in 0..good.len() {
                assert!(Bootstrap::decode(&good[..cut]).is_err(), "cut at {cut}");
            }
        }
        assert!(Bootstrap::decode(b"Z").is_err());
    }

    #[test]
    fn external_topology_defaults_ranks_by_position() {
        let t = external_topology(&[(0, None), (0, None), (1, None), (1, None)]).unwrap();
        assert_eq!((t.degree(), t.ranks()), (2, 2));
        assert_eq!(t.place(3).replica, 1);
        assert_eq!(t.place(3).rank, 1);
        let t = external_topology(&[(1, Some(0)), (0, Some(0))]).unwrap();
        assert_eq!(t.place(0).replica, 1);
    }

    #[test]
    fn inconsistent_external_mapping_is_refused() {
        let e = external_topology(&[(0, None), (0, None), (1, None)]).unwrap_err();
        assert!(
            e.to_string().contains("3 processes cannot form 2 replicas"),
            "{e}"
        );
        let e = external_topology(&[(0, Some(0)), (1, Some(1))]).unwrap_err();
        assert!(e.to_string().contains("outside"), "{e}");
    }

    #[test]
    fn the_mpich_device_is_read_from_the_version_text() {
        let text = "MPICH Version:\t4.0.2\nMPICH Device:\tch4:ucx\nMPICH configure:\t--x\n";
        assert_eq!(mpich_device(text), Some("ch4:ucx"));
        assert_eq!(mpich_device("Open MPI v4.1.4, package: Debian"), None);
    }

    #[test]
    fn library_names_are_short() {
        assert_eq!(
            library_name("MPICH Version:\t4.0.2\nMPICH Release date: x"),
            "MPICH 4.0.2"
        );
        assert_eq!(
            library_name("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4"),
            "Open MPI 4.1.4"
        );
        assert_eq!(library_name("Other MPI 1.0\n"), "Other MPI 1.0");
    }

    #[test]
    fn byte_counts_read_well() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(4096), "4.0 KiB");
        assert_eq!(bytes(3 << 19), "1.5 MiB");
        assert_eq!(bytes(5 << 40), "5.0 TiB");
    }

    #[test]
    fn startup_line_reads_well() {
        let t = Topology::regular(6, 3, LayoutKind::Block).unwrap();
        assert_eq!(
            startup_line(&t, "block", "MPICH 4.0.2"),
            "redio: 6 processes = 2 ranks x 3 replicas (block), MPICH 4.0.2"
        );
        let t = Topology::regular(1, 1, LayoutKind::Block).unwrap();
        assert_eq!(
            startup_line(&t, "block", "X"),
            "redio: 1 process = 1 rank x 1 replica (block), X"
        );
    }
}
