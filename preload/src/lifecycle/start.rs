//! What `MPI_Init` adds to the application's start-up.
//!
//! 1. World rank 0 loads and validates the configuration and broadcasts it
//!    (with the map file, if any); an invalid one stops every rank with the
//!    same message.
//! 2. Every rank derives the same topology from it.
//! 3. Built-in mode builds the replica worlds and replica sets from the
//!    topology and starts translating; external mode takes the mapping from the
//!    environment (or later from `redio_set_replica_comm`).
//! 4. World rank 0 prints the start-up line.

use crate::comm::collective::{allgather, barrier, broadcast, check, create_group, rank_and_size};
use crate::comm::ffi;

use crate::comm::flavour;
use crate::comm::pmpi;
use crate::ft::heartbeat;
use crate::ft::liveness;
use crate::ft::ulfm;
use crate::ft::watchdog;
use crate::state::settings;
use crate::state::world;
use crate::state::world::Identity;
use crate::state::world::Mode;
use crate::sys::guard::InsideMpi;
use crate::sys::log;
use redio_core::config::{Config, Layout, LogLevel, Source};
use redio_core::startup::{self, Bootstrap};
use redio_core::topology::Topology;

/// Environment variable: this process's replica in external mode.
pub const ENV_EXTERNAL_REPLICA: &str = "REDIO_EXTERNAL_REPLICA";
/// Environment variable: this process's logical rank in external mode
/// (optional: defaults to its position among the processes of its replica).
pub const ENV_EXTERNAL_RANK: &str = "REDIO_EXTERNAL_RANK";

/// Tags of the two `MPI_Comm_create_group` calls (distinct, so the two
/// creations can never match each other's messages).
const TAG_REPLICA_WORLD: i32 = 0x7ed0;
const TAG_REPLICA_SET: i32 = 0x7ed1;

/// Runs after a successful `PMPI_Init*`.
/// `MPI_Init` and `MPI_Init_thread`: `init` (the real `PMPI_Init*`), then
/// the replicated world; `wrappers` counts the generated `MPI_*` wrappers
/// and those that translate a communicator, for the start-up log.
pub fn init(init: impl FnOnce() -> std::ffi::c_int, wrappers: (usize, usize)) -> std::ffi::c_int {
    crate::comm::handle::bind_predefined();
    crate::comm::flavour::check_or_exit();
    let rc = {
        let _inside = InsideMpi::enter();
        init()
    };
    if rc == unsafe { ffi::redio_mpi_success } {
        after_init();
        crate::log!(
            Debug,
            "{} generated MPI_* wrappers, {} of them translate a communicator; MPI from {}",
            wrappers.0,
            wrappers.1,
            crate::sys::symbols::mpi_library_path().unwrap_or_default()
        );
        crate::ft::ulfm_probe::probe_if_asked();
    }
    rc
}

fn after_init() {
    let _inside = InsideMpi::enter();
    // Before the first wait: every polled wait from here on sees deaths.
    crate::ft::watch::install();
    let started = std::time::Instant::now();
    let comm = world::real_world();
    // SAFETY: MPI is initialised; the real world is valid.
    let (world_rank, world_size) = unsafe { rank_and_size(comm) };
    log::set_identity(world_rank, None);

    let packet = if world_rank == 0 {
        bootstrap()
    } else {
        Vec::new()
    };
    let packet = broadcast(comm, packet);
    let (config, map_text) = match Bootstrap::decode(&packet) {
        Ok(Bootstrap::Ready {
            config_yaml,
            map_text,
            run,
        }) => match Config::from_yaml_str(&config_yaml, "<from world rank 0>", &|_| None) {
            Ok(config) => {
                world::set_run(run);
                (config, map_text)
            }
            Err(e) => stop_everyone(&format!("configuration from world rank 0: {e}")),
        },
        Ok(Bootstrap::Failed(message)) => stop_everyone(&message),
        Err(message) => stop_everyone(&message),
    };
    log::set_threshold(level_of(config.log.level));
    settings::install(config.clone());
    let configured = started.elapsed();

    let (topology, mode) = match config.replication.source {
        Source::Builtin => (
            builtin_topology(&config, &map_text, world_size),
            Mode::Builtin,
        ),
        Source::External => match external_topology(comm) {
            Some(topology) => (topology, Mode::ExternalEnv),
            None => {
                crate::log!(Info, "external mode: waiting for redio_set_replica_comm()");
                return;
            }
        },
    };
    let placement = topology.place(world_rank);
    log::set_identity(world_rank, Some((placement.replica, placement.rank)));
    // Before any communicator exists, so that all of redio's inherit
    // MPI_ERRORS_RETURN. Built-in mode only: in external mode the
    // application owns the real world and its error handler.
    let ulfm = mode == Mode::Builtin
        && config.faults.survive_deaths(topology.degree())
        && ulfm::activate();
    // MPICH spins inside blocking calls: ranks that arrive early would steal
    // the CPU from ranks still in MPI_Init. Meet first in a polled barrier.
    // SAFETY: the real world, and every process takes this path.
    unsafe { barrier(comm) };
    // Every rank knows the whole topology, so each communicator is built
    // from its member list by its members only (MPI_Comm_create_group):
    // an order of magnitude faster than MPI_Comm_split over the whole world
    // when ranks outnumber cores.
    // SAFETY: the members of each group reach their creation together.
    unsafe {
        if mode == Mode::Builtin {
            let members = topology.replica_members(placement.replica);
            let replica_world = create_group(comm, &members, TAG_REPLICA_WORLD);
            if ulfm {
                ulfm::guard_replica_world(replica_world);
            }
            world::install_replica_world(replica_world);
        }
        let members = topology.replica_set_members(placement.rank);
        crate::ft::membership::install_from_comm(
            create_group(comm, &members, TAG_REPLICA_SET),
            world_rank,
        );
    }
    world::set_identity(Identity {
        mode,
        world_rank,
        world_size,
        placement,
        degree: topology.degree(),
        ranks: topology.ranks(),
    });
    let hosts = gather_processes(comm, &topology);
    // After the processes are known: a member on this node is reached over
    // loopback.
    crate::coord::link::stream::connect_replica_set();
    world::set_colocated(replica_set_on_one_node(&topology, placement.rank, &hosts));
    warn_if_colocated(world_rank, &topology, &hosts);
    start_fault_handling(&config, &topology, world_rank);
    crate::lifecycle::files::start();
    crate::log!(
        Debug,
        "start-up took {:?} (configuration {configured:?})",
        started.elapsed()
    );
    if world_rank == 0 {
        let how = match mode {
            Mode::Builtin => topology.kind().to_string(),
            _ => "external, from the environment".to_string(),
        };
        log::emit(&format!(
            "{}\n",
            startup::startup_line(&topology, &how, &library_name())
        ));
    }
    test_late_start(world_rank);
    // From here on a death can be survived (`redio run` ends the job on
    // one before every process got here).
    crate::state::report::event(redio_core::outcome::Event::Started);
}

/// Test hook: `REDIO_TEST_LATE_START=<world rank>:<ms>` makes that process
/// record its start `ms` later, as a process descheduled on a loaded node
/// does, while the others already run.
fn test_late_start(world_rank: u32) {
    let Ok(value) = std::env::var("REDIO_TEST_LATE_START") else {
        return;
    };
    let parsed = value
        .split_once(':')
        .and_then(|(w, ms)| Some((w.trim().parse::<u32>().ok()?, ms.trim().parse().ok()?)));
    if let Some((_, ms)) = parsed.filter(|&(w, _)| w == world_rank) {
        crate::log!(
            Warn,
            "REDIO_TEST_LATE_START: recording the start {ms} ms late"
        );
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// Gathers every process's id and host ([`liveness::install`]) with one
/// polled `Iallgather`, and returns the hosts, by world rank.
///
/// (`MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)` would tell nodes apart too,
/// but it is a blocking communicator creation: 50–150 ms of start-up on an
/// oversubscribed node.)
fn gather_processes(comm: ffi::MPI_Comm, topology: &Topology) -> Vec<u64> {
    let host = host_id();
    // SAFETY: getpid has no preconditions.
    let mine = [u64::from(unsafe { libc::getpid() } as u32), host];
    let mut all = vec![0u64; 2 * topology.world_size() as usize];
    check(allgather(&mine, &mut all, comm));
    let peers: Vec<liveness::Peer> = all
        .chunks(2)
        .map(|p| liveness::Peer {
            pid: p[0] as u32 as i32,
            host: p[1],
        })
        .collect();
    let hosts = peers.iter().map(|p| p.host).collect();
    liveness::install(peers, host);
    hosts
}

/// With replicas and `on_replica_failure: continue`: the watchdog that
/// retires a replica which lost a process, and the signal handlers
/// ([`watchdog`]).
fn start_fault_handling(config: &Config, topology: &Topology, world_rank: u32) {
    if topology.degree() < 2 || !liveness::enabled() {
        return;
    }
    let survive = config.faults.survive_deaths(topology.degree());
    // Only MPICH ends the job on a death by signal (docs/fault-tolerance.md).
    watchdog::install_signal_handlers(survive && flavour::built_for() == "MPICH");
    if survive && ulfm::active() {
        watchdog::ignore_broken_pipes();
    }
    if let Some(dir) = &config.faults.heartbeat_dir {
        heartbeat::start(
            dir,
            &liveness::job_name(),
            world_rank,
            config.faults.heartbeat,
            config.faults.timeout,
        );
    }
    watchdog::start(topology.clone(), world_rank, config.faults.heartbeat);
}

/// True when every replica of logical rank `rank` runs on one node
/// (`hosts`, by world rank), with `r > 1`: their node-local files are then
/// one file, coordinated (`io::paths`).
fn replica_set_on_one_node(topology: &Topology, rank: u32, hosts: &[u64]) -> bool {
    let members = topology.replica_set_members(rank);
    members.len() > 1
        && members
            .iter()
            .all(|&w| hosts[w as usize] == hosts[members[0] as usize])
}

/// Tells (once, from world rank 0) how node-local files are handled when
/// replicas of one logical rank share a node (`hosts`, by world rank):
/// coordinated when all replicas of a rank share it, colliding when only
/// some do (r=3 over two nodes) unless `remap` separates them.
fn warn_if_colocated(world_rank: u32, topology: &Topology, all: &[u64]) {
    if world_rank != 0 {
        return;
    }
    let shares = |rank: u32| {
        let mut hosts: Vec<u64> = topology
            .replica_set_members(rank)
            .iter()
            .map(|&w| all[w as usize])
            .collect();
        hosts.sort_unstable();
        hosts.windows(2).any(|pair| pair[0] == pair[1])
    };
    let sharing: Vec<u32> = (0..topology.ranks()).filter(|&rank| shares(rank)).collect();
    let some = !sharing.is_empty();
    let partly = sharing
        .iter()
        .any(|&rank| !replica_set_on_one_node(topology, rank, all));
    if !some {
        return;
    }
    let remapped = settings::get().is_some_and(|c| !c.remap.is_empty());
    if partly && !remapped {
        crate::log!(
            Warn,
            "some replicas of a logical rank share a node with only part of their replica \
             set: their node-local files would collide. Give each replica its own directory \
             with `remap` (docs/interposition.md)"
        );
    } else if partly {
        // Coordination needs the whole replica set on one node.
        crate::log!(
            Info,
            "some replicas of a logical rank share a node with only part of their replica \
             set: `remap` keeps apart the node-local files it names; others would collide"
        );
    } else {
        crate::log!(
            Info,
            "replicas of a logical rank share a node: node-local files that `remap` leaves \
             alone are coordinated among them like shared ones"
        );
    }
}

/// A hash of this node's host name.
fn host_id() -> u64 {
    let mut name = [0u8; 256];
    // SAFETY: gethostname writes at most `name.len()` bytes.
    unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) };
    // FNV-1a: stable, and plenty for telling a job's nodes apart.
    name.iter()
        .take_while(|&&b| b != 0)
        .fold(0xcbf2_9ce4_8422_2325u64, |hash, &b| {
            (hash ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
}

/// Rank 0's half of step 1: the packet to broadcast.
fn bootstrap() -> Vec<u8> {
    let packet = match Config::load_process_env(None) {
        Err(e) => Bootstrap::Failed(format!("invalid configuration:\n{e}")),
        Ok(config) => match read_map_file(&config) {
            Ok(map_text) => Bootstrap::Ready {
                config_yaml: config.to_yaml(),
                map_text,
                run: new_run_id(),
            },
            Err(message) => Bootstrap::Failed(message),
        },
    };
    packet.encode()
}

/// A random identity for this run (`getrandom`; the clock and the process
/// id if that fails), never 0.
fn new_run_id() -> u64 {
    let mut bytes = [0u8; 8];
    // SAFETY: getrandom writes at most `bytes.len()` bytes into the buffer.
    let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    let id = if n == bytes.len() as isize {
        u64::from_le_bytes(bytes)
    } else {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        // SAFETY: getpid has no preconditions.
        now ^ (u64::from(unsafe { libc::getpid() } as u32) << 32)
    };
    id.max(1)
}

fn read_map_file(config: &Config) -> Result<String, String> {
    match (&config.replication.layout, &config.replication.map_file) {
        (Layout::Map, Some(path)) => Topology::read_map_file(path),
        _ => Ok(String::new()),
    }
}

fn builtin_topology(config: &Config, map_text: &str, world_size: u32) -> Topology {
    let degree = u32::from(config.replication.degree);
    let layout = config.replication.layout.into();
    let result = Topology::of_layout(layout, world_size, degree, map_text);
    result.unwrap_or_else(|e| stop_everyone(&format!("impossible replica topology: {e}")))
}

/// Gathers every rank's `REDIO_EXTERNAL_*` claim; `None` when this job
/// gives no mapping through the environment.
fn external_topology(comm: ffi::MPI_Comm) -> Option<Topology> {
    let parse = |key: &str| -> i32 {
        match std::env::var(key) {
            Err(_) => -1,
            Ok(text) => text.trim().parse::<u32>().map_or(-2, |v| v as i32),
        }
    };
    let mine = [parse(ENV_EXTERNAL_REPLICA), parse(ENV_EXTERNAL_RANK)];
    // SAFETY: the real world is valid.
    let (_, size) = unsafe { rank_and_size(comm) };
    let mut all = vec![0i32; 2 * size as usize];
    check(allgather(&mine, &mut all, comm));
    let claims: Vec<[i32; 2]> = all.chunks(2).map(|c| [c[0], c[1]]).collect();
    if claims.iter().all(|c| c[0] == -1) {
        return None;
    }
    if let Some(w) = claims.iter().position(|c| c[0] < 0 || c[1] == -2) {
        stop_everyone(&format!(
            "external mode: world rank {w} has no valid {ENV_EXTERNAL_REPLICA} / \
             {ENV_EXTERNAL_RANK} (every process needs a non-negative integer replica)"
        ));
    }
    let claims: Vec<(u32, Option<u32>)> = claims
        .iter()
        .map(|c| (c[0] as u32, (c[1] >= 0).then_some(c[1] as u32)))
        .collect();
    Some(startup::external_topology(&claims).unwrap_or_else(|e| {
        stop_everyone(&format!("external mode: inconsistent replica mapping: {e}"))
    }))
}
/// The library's short name and version, e.g. `MPICH 4.0.2`.
fn library_name() -> String {
    startup::library_name(&flavour::library_version_text())
}

fn level_of(level: LogLevel) -> log::Level {
    match level {
        LogLevel::Error => log::Level::Error,
        LogLevel::Warn => log::Level::Warn,
        LogLevel::Info => log::Level::Info,
        LogLevel::Debug => log::Level::Debug,
        LogLevel::Trace => log::Level::Trace,
    }
}

/// Stops the job cleanly when every rank reached the same verdict.
///
/// Every rank calls this with the same message (it derives from data rank 0
/// broadcast), so `PMPI_Finalize` is collective and nothing hangs.
pub fn stop_everyone(message: &str) -> ! {
    log::announce(format_args!("error: {message}"));
    // SAFETY: every rank takes this path together.
    unsafe { pmpi::PMPI_Finalize() };
    std::process::exit(2)
}
