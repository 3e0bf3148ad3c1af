//! `redio exec` as the owner of the application's stdout and stderr
//! (issue 18, "output once"; the formats are `redio_core::output`'s).
//!
//! The supervisor ([`super::supervise`]) gives the application two pipes
//! and [`pump`]s them: it cuts what it reads into whole lines and
//!
//! - in [`OutputMode::All`], writes every line prefixed with `[replica K] `;
//! - in [`OutputMode::Once`], writes the line only if this process is its
//!   logical rank's printer: replica 0, or a survivor that took over. A
//!   follower keeps the lines the printer has not printed yet in memory
//!   (at most [`FOLLOWER_BUFFER`] bytes) and, under `redio run`, watches
//!   the lower replicas' state files in the run directory: when every
//!   lower replica has ended abnormally (died, retired), it takes over and
//!   prints from the first line nobody printed. A follower whose
//!   application ends first waits for the lower replicas to end, so that
//!   no line is lost when they die later.
//!
//! Lines of redio's own diagnostics on stderr pass from every process.
//! Under `redio run`, every line read is also recorded for the divergence
//! check ([`redio_core::output::find_divergences`]).

use crate::outcome::{Event, ExitHow, Life, LifeEvent, Record};
use crate::output::{
    index_path, is_redio_line, record_count, replica_prefix, state_path, Done, LineRecord,
    LineSplitter, OutputMode, State, Stream,
};
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// Bytes of unprinted lines a follower keeps for a fail-over; past it the
/// oldest are dropped (and named if a fail-over then needs them).
pub const FOLLOWER_BUFFER: usize = 64 << 20;

/// How often a follower looks at the lower replicas' state.
const CHECK_PERIOD: Duration = Duration::from_millis(100);

/// How long a follower whose application ended waits for a lower
/// replica that never wrote its state (another node, or never started).
const MISSING_GRACE: Duration = Duration::from_secs(5);

/// Where this process sits, as far as its output goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Role {
    /// Its logical rank.
    pub rank: u32,
    /// Its replica.
    pub replica: u32,
    /// Replicas per logical rank.
    pub degree: u32,
    /// Its world rank, when the launcher said (for its event file).
    pub world_rank: Option<u32>,
    /// The logical rank of world rank 0, the process the launcher gives
    /// its stdin: every replica of that rank gets a copy ([`feed_stdin`]).
    pub stdin_rank: Option<u32>,
}

/// The world rank and size the launcher gave this process (Hydra:
/// `PMI_RANK`/`PMI_SIZE`; Open MPI: `OMPI_COMM_WORLD_*`; PMIx, Slurm).
pub(crate) fn launcher_rank_and_size() -> Option<(u32, u32)> {
    let var = |names: &[&str]| {
        names
            .iter()
            .find_map(|name| std::env::var(name).ok()?.trim().parse::<u32>().ok())
    };
    let rank = var(&[
        "PMI_RANK",
        "OMPI_COMM_WORLD_RANK",
        "PMIX_RANK",
        "SLURM_PROCID",
    ])?;
    let size = var(&["PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"])?;
    Some((rank, size))
}

/// This process's [`Role`], computed as the preload will compute it: from
/// the configuration (environment > `REDIO_CONFIG` > defaults) and the
/// launcher's world rank and size; in external mode from
/// `REDIO_EXTERNAL_REPLICA` and `REDIO_EXTERNAL_RANK`. `None` when it
/// cannot be known here (a configuration error, which the preload
/// reports; external mode through the C API): the output then passes
/// through untouched.
pub fn role_from_env() -> Option<Role> {
    use crate::config::{Config, Layout, Source};
    use crate::topology::Topology;
    let config = Config::load_process_env(None).ok()?;
    let degree = u32::from(config.replication.degree);
    let world = launcher_rank_and_size();
    if config.replication.source == Source::External {
        let var = |name: &str| std::env::var(name).ok()?.trim().parse::<u32>().ok();
        return Some(Role {
            rank: var("REDIO_EXTERNAL_RANK")?,
            replica: var("REDIO_EXTERNAL_REPLICA")?,
            degree: var("REDIO_EXTERNAL_DEGREE").unwrap_or(degree),
            world_rank: world.map(|(rank, _)| rank),
            stdin_rank: None,
        });
    }
    let (world_rank, size) = world?;
    let map_text = match config.replication.layout {
        Layout::Map => Topology::read_map_file(config.replication.map_file.as_ref()?).ok()?,
        _ => String::new(),
    };
    let topology =
        Topology::of_layout(config.replication.layout.into(), size, degree, &map_text).ok()?;
    let place = topology.place(world_rank);
    Some(Role {
        rank: place.rank,
        replica: place.replica,
        degree,
        world_rank: Some(world_rank),
        stdin_rank: Some(topology.place(0).rank),
    })
}

impl Plan {
    /// Whether this process's application gets its stdin through
    /// [`feed_stdin`]: it is a replica of the logical rank the launcher
    /// gives stdin to, with replicas, under `redio run`.
    pub fn shares_stdin(&self) -> bool {
        self.role.degree > 1
            && self.run_dir.is_some()
            && self.role.stdin_rank == Some(self.role.rank)
    }
}

/// Gives every replica of the stdin rank the same stdin. The launcher
/// feeds world rank 0 only (MPICH's Hydra and Open MPI alike; the other
/// processes get an empty stdin, or under Hydra one that never ends), so
/// another replica of that logical rank read nothing, or waited forever.
/// World rank 0's `redio exec` passes its stdin to its application and
/// appends it to `stdin` in the run directory (`stdin.eof` at its end, or
/// when the application closed its stdin); the other replicas' `redio
/// exec` feed their application from that file.
pub fn feed_stdin(plan: &Plan, child_stdin: std::process::ChildStdin) {
    let Some(dir) = plan.run_dir.clone() else {
        return;
    };
    let copy = dir.join("stdin");
    let eof = dir.join("stdin.eof");
    if plan.role.world_rank == Some(0) {
        // Straight from this process's stdin, as fast as its application
        // reads (the launcher reads no further ahead than that either);
        // into the copy first, so the others are never behind it.
        std::thread::spawn(move || {
            use std::io::Read;
            let mut child_stdin = child_stdin;
            let file = OpenOptions::new().create(true).append(true).open(&copy);
            let (Ok(mut file), mut buf) = (file, vec![0u8; 1 << 16]) else {
                let _ = File::create(&eof);
                return;
            };
            loop {
                let n = match io::stdin().lock().read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                let _ = file.write_all(&buf[..n]);
                if child_stdin.write_all(&buf[..n]).is_err() {
                    break; // The application closed its stdin.
                }
            }
            let _ = File::create(&eof);
        });
        return;
    }
    std::thread::spawn(move || {
        use std::io::Read;
        let mut child_stdin = child_stdin;
        let mut offset = 0u64;
        let mut buf = vec![0u8; 1 << 16];
        loop {
            // Whether the copy was complete before reading it.
            let ended = eof.exists();
            let mut progressed = false;
            if let Ok(mut file) = File::open(&copy) {
                use std::io::Seek;
                if file.seek(io::SeekFrom::Start(offset)).is_ok() {
                    while let Ok(n) = file.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        if child_stdin.write_all(&buf[..n]).is_err() {
                            return; // The application closed its stdin.
                        }
                        offset += n as u64;
                        progressed = true;
                    }
                }
            }
            if ended && !progressed {
                return; // Dropping the pipe ends the application's stdin.
            }
            if !progressed {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    });
}

/// What the pump needs.
pub struct Plan {
    /// Once or all.
    pub mode: OutputMode,
    /// Where this process sits.
    pub role: Role,
    /// The run directory of `redio run` (records, states), if any.
    pub run_dir: Option<PathBuf>,
}

/// One of the application's streams as the pump reads it.
struct Pipe {
    stream: Stream,
    fd: Option<RawFd>,
    /// Where its lines go (1 or 2).
    out: RawFd,
    splitter: LineSplitter,
    /// Lines read (redio's own excepted).
    count: u64,
    /// Unprinted lines of a follower, with their index.
    held: VecDeque<(u64, Vec<u8>)>,
    held_bytes: usize,
    /// Lines before this were dropped from `held` to bound memory.
    dropped_to: u64,
    /// As printer: lines before this were printed by another replica.
    print_from: u64,
    records: Option<File>,
}

/// The state of a lower replica, as a follower sees it.
enum Lower {
    /// No state file yet.
    Missing,
    /// Its `redio exec` is alive; `printed` per stream when it prints.
    Running { printed: [u64; 2] },
    /// It ended.
    Ended(Done),
}

struct Pump {
    plan: Plan,
    pipes: [Pipe; 2],
    printer: bool,
    /// A lower replica ended normally: this one never prints.
    never: bool,
    state: Option<File>,
    last_check: Instant,
}

/// A terminal for the application's stdout, as `(ours, the
/// application's)`, when this process's own stdout is a terminal: Open
/// MPI's launcher gives its processes one (so C's stdio flushes at every
/// line), and the application must find what it would find without
/// redio. Like Open MPI's, it does not turn `\n` into `\r\n` nor echo.
pub fn terminal_for_stdout() -> Option<(OwnedFd, OwnedFd)> {
    // SAFETY: isatty, openpty and the termios calls on descriptors this
    // function owns; every pointer is valid or null where allowed.
    unsafe {
        if libc::isatty(1) != 1 {
            return None;
        }
        let (mut master, mut slave) = (-1, -1);
        if libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        ) != 0
        {
            return None;
        }
        let (master, slave) = (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave));
        let mut attrs: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(slave.as_raw_fd(), &mut attrs) == 0 {
            attrs.c_oflag &= !(libc::ONLCR | libc::OCRNL);
            attrs.c_lflag &= !(libc::ECHO | libc::ECHOE | libc::ECHOK | libc::ECHONL);
            libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &attrs);
        }
        Some((master, slave))
    }
}

/// Reads the application's `stdout` and `stderr` (pipes, or for stdout
/// the `terminal` of [`terminal_for_stdout`]) until it exits, writes its
/// lines as [`Plan::mode`] says, and returns its status.
pub fn pump(child: &mut Child, plan: Plan, terminal: Option<OwnedFd>) -> io::Result<ExitStatus> {
    // The pump owns the descriptors from here (closed at end of stream).
    let out = match terminal {
        Some(master) => Some(master.into_raw_fd()),
        None => child.stdout.take().map(IntoRawFd::into_raw_fd),
    };
    let err = child.stderr.take().map(IntoRawFd::into_raw_fd);
    let mut pump = Pump::new(plan, out, err);
    pump.write_state(&State::pid_line(
        std::process::id() as i32,
        start_time(std::process::id() as i32).unwrap_or(0),
        &host_name(),
    ));
    let status = loop {
        let open: Vec<usize> = (0..2).filter(|&i| pump.pipes[i].fd.is_some()).collect();
        if open.is_empty() {
            break child.wait()?;
        }
        let mut fds: Vec<libc::pollfd> = open
            .iter()
            .map(|&i| libc::pollfd {
                fd: pump.pipes[i].fd.unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: `fds` is a valid array of `fds.len()` pollfd.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 100) };
        if ready > 0 {
            for (k, &i) in open.iter().enumerate() {
                if fds[k].revents != 0 {
                    pump.read(i);
                }
            }
        }
        if let Some(status) = child.try_wait()? {
            // Whatever the application wrote before it ended is in the pipes.
            for i in 0..2 {
                pump.read(i);
            }
            break status;
        }
        pump.maybe_check();
    };
    pump.finish(status);
    Ok(status)
}

impl Pump {
    fn new(plan: Plan, out: Option<RawFd>, err: Option<RawFd>) -> Self {
        let pipe = |stream: Stream, fd: Option<RawFd>| {
            if let Some(fd) = fd {
                // SAFETY: fcntl on a descriptor this process owns.
                unsafe {
                    let flags = libc::fcntl(fd, libc::F_GETFL);
                    libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
                }
            }
            let records = plan.run_dir.as_ref().and_then(|dir| {
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(index_path(dir, plan.role.rank, plan.role.replica, stream))
                    .ok()
            });
            Pipe {
                stream,
                fd,
                out: if stream == Stream::Stdout { 1 } else { 2 },
                splitter: LineSplitter::default(),
                count: 0,
                held: VecDeque::new(),
                held_bytes: 0,
                dropped_to: 0,
                print_from: 0,
                records,
            }
        };
        let state = plan.run_dir.as_ref().and_then(|dir| {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(state_path(dir, plan.role.rank, plan.role.replica))
                .ok()
        });
        let printer = plan.mode == OutputMode::All || plan.role.replica == 0;
        Pump {
            pipes: [pipe(Stream::Stdout, out), pipe(Stream::Stderr, err)],
            printer,
            never: false,
            state,
            last_check: Instant::now(),
            plan,
        }
    }

    fn write_state(&mut self, line: &str) {
        if let Some(file) = &mut self.state {
            let _ = file.write_all(line.as_bytes());
        }
    }

    /// Reads what pipe `i` has (without blocking) and handles its lines.
    fn read(&mut self, i: usize) {
        let Some(fd) = self.pipes[i].fd else { return };
        let mut buf = vec![0u8; 1 << 16];
        let mut lines = Vec::new();
        // Bounded, so that the other stream and the checks get their turn.
        for _ in 0..64 {
            // SAFETY: `buf` is writable for its length.
            let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n > 0 {
                self.pipes[i].splitter.push(&buf[..n as usize], &mut lines);
                continue;
            }
            if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            // A terminal whose other end is closed reads as EIO.
            if n == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EIO) {
                // End of the stream. A last line without a newline waits
                // for `finish`, which knows how the application ended.
                // SAFETY: the descriptor is ours and used no more.
                unsafe { libc::close(fd) };
                self.pipes[i].fd = None;
            }
            break;
        }
        self.handle(i, lines);
    }

    /// Writes, holds and records `lines` of pipe `i`.
    fn handle(&mut self, i: usize, lines: Vec<Vec<u8>>) {
        if lines.is_empty() {
            return;
        }
        let mode = self.plan.mode;
        let prefix = replica_prefix(self.plan.role.replica);
        let printer = self.printer;
        let never = self.never;
        let pipe = &mut self.pipes[i];
        let mut out = Vec::new();
        let mut records = Vec::new();
        for line in lines {
            if pipe.stream == Stream::Stderr && is_redio_line(&line) {
                out.extend_from_slice(&line);
                continue;
            }
            let index = pipe.count;
            pipe.count += 1;
            records.extend_from_slice(&LineRecord::of(&line).encode());
            match mode {
                OutputMode::All => {
                    out.extend_from_slice(prefix.as_bytes());
                    out.extend_from_slice(&line);
                }
                OutputMode::Once if printer => {
                    if index >= pipe.print_from {
                        out.extend_from_slice(&line);
                    }
                }
                OutputMode::Once if never || self.plan.run_dir.is_none() => {}
                OutputMode::Once => {
                    pipe.held_bytes += line.len();
                    pipe.held.push_back((index, line));
                    while pipe.held_bytes > FOLLOWER_BUFFER {
                        let Some((index, line)) = pipe.held.pop_front() else {
                            break;
                        };
                        pipe.held_bytes -= line.len();
                        pipe.dropped_to = index + 1;
                    }
                }
            }
        }
        // Printed first, recorded after: a printer's record count is the
        // number of lines it printed.
        write_lines(pipe.out, &out);
        if let Some(file) = &mut pipe.records {
            let _ = file.write_all(&records);
        }
    }

    fn maybe_check(&mut self) {
        if self.last_check.elapsed() >= CHECK_PERIOD {
            self.last_check = Instant::now();
            self.check();
        }
    }

    /// A follower's look at the lower replicas: take over when they all
    /// ended abnormally, else drop held lines they printed. Returns true
    /// when nothing is left to wait for (this one prints, never prints, or
    /// every lower replica ended).
    fn check(&mut self) -> bool {
        let (Some(dir), OutputMode::Once) = (self.plan.run_dir.clone(), self.plan.mode) else {
            return true;
        };
        if self.printer || self.never {
            return true;
        }
        let lowers: Vec<Lower> = (0..self.plan.role.replica)
            .map(|k| lower_state(&dir, self.plan.role.rank, k))
            .collect();
        let mut printed = [0u64; 2];
        for lower in &lowers {
            let p = match lower {
                Lower::Running { printed } => *printed,
                Lower::Ended(done) => done.printed,
                Lower::Missing => [0, 0],
            };
            printed = [printed[0].max(p[0]), printed[1].max(p[1])];
        }
        // A lower replica that ended normally printed its complete streams:
        // nothing is left for this one to print (what it holds past them
        // is extra output, reported as a divergence).
        let complete = lowers
            .iter()
            .any(|l| matches!(l, Lower::Ended(done) if done.normal));
        if !complete && lowers.iter().all(|l| matches!(l, Lower::Ended(_))) {
            self.take_over(printed);
            return true;
        }
        for (pipe, &upto) in self.pipes.iter_mut().zip(&printed) {
            while pipe.held.front().is_some_and(|(index, _)| *index < upto) {
                if let Some((_, line)) = pipe.held.pop_front() {
                    pipe.held_bytes -= line.len();
                }
            }
        }
        self.never = complete;
        complete
    }

    /// Becomes the printer from line `from` of each stream: prints the
    /// held lines from there.
    fn take_over(&mut self, from: [u64; 2]) {
        self.printer = true;
        self.write_state(&State::printer_line(from));
        let role = self.plan.role;
        for (pipe, &from) in self.pipes.iter_mut().zip(&from) {
            pipe.print_from = from;
            if pipe.dropped_to > from {
                let note = format!(
                    "redio exec: rank {} replica {}: lines {} to {} of the {} were dropped \
                     before this replica took over printing (more than {} MiB held): they are \
                     missing from the output\n",
                    role.rank,
                    role.replica,
                    from + 1,
                    pipe.dropped_to,
                    pipe.stream.name(),
                    FOLLOWER_BUFFER >> 20
                );
                write_fd(2, note.as_bytes());
            }
            let mut out = Vec::new();
            for (index, line) in pipe.held.drain(..) {
                if index >= from {
                    out.extend_from_slice(&line);
                }
            }
            pipe.held_bytes = 0;
            write_lines(pipe.out, &out);
        }
    }

    /// After the application ended: a follower whose application ended
    /// normally waits until the lower replicas ended (taking over if they
    /// all failed); then the `done` line.
    fn finish(&mut self, status: ExitStatus) {
        let end = end_of(status, &self.plan);
        let normal = end == End::Normal;
        for i in 0..2 {
            let Some(last) = self.pipes[i].splitter.finish() else {
                continue;
            };
            // A printer that died in the middle of a line (a SIGKILL while
            // stdio's buffer held half of it) leaves the whole line to the
            // replica that takes over; otherwise the last line counts as
            // it is, as a plain run shows it.
            if normal || self.plan.mode == OutputMode::All || !self.printer {
                self.handle(i, vec![last]);
            }
        }
        if end == End::Failed && !self.printer && self.plan.mode == OutputMode::Once {
            // Drop what the printer printed meanwhile (or take over, if
            // every lower replica ended abnormally too).
            self.check();
        }
        if end == End::Failed && !self.printer && self.plan.mode == OutputMode::Once {
            // A follower that died: its last stderr lines (a crash message)
            // that the printer has not printed, marked with their replica.
            let prefix = replica_prefix(self.plan.role.replica);
            let pipe = &mut self.pipes[Stream::Stderr.index()];
            let mut out = Vec::new();
            for (_, line) in pipe.held.drain(..) {
                out.extend_from_slice(prefix.as_bytes());
                out.extend_from_slice(&line);
            }
            write_lines(2, &out);
        }
        if normal && self.plan.mode == OutputMode::Once && self.plan.run_dir.is_some() {
            let since = Instant::now();
            loop {
                if self.check() {
                    break;
                }
                let dir = self.plan.run_dir.clone().unwrap_or_default();
                let missing = (0..self.plan.role.replica)
                    .any(|k| matches!(lower_state(&dir, self.plan.role.rank, k), Lower::Missing));
                if missing && since.elapsed() > MISSING_GRACE {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let printed = if self.printer {
            [self.pipes[0].count, self.pipes[1].count]
        } else {
            [0, 0]
        };
        self.write_state(&State::done_line(Done { normal, printed }));
    }
}

/// What a follower knows of lower replica `replica` of `rank`.
fn lower_state(dir: &Path, rank: u32, replica: u32) -> Lower {
    let Ok(text) = std::fs::read_to_string(state_path(dir, rank, replica)) else {
        return Lower::Missing;
    };
    let state = State::parse(&text);
    let counts =
        || Stream::BOTH.map(|stream| record_count(&index_path(dir, rank, replica, stream)));
    let prints = replica == 0 || state.took_over.is_some();
    if let Some(done) = state.done {
        return Lower::Ended(done);
    }
    let printed = if prints { counts() } else { [0, 0] };
    let alive = match &state.process {
        None => return Lower::Missing,
        Some((pid, start, host)) => {
            // Another node's process cannot be looked at: alive until done.
            *host != host_name() || start_time(*pid).is_some_and(|s| s == *start)
        }
    };
    if alive {
        Lower::Running { printed }
    } else {
        // Its `redio exec` vanished (SIGKILL) without a last word.
        Lower::Ended(Done {
            normal: false,
            printed,
        })
    }
}

/// How the application ended, for its streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// On its own (an exit, after `MPI_Finalize` in an MPI job): its
    /// streams are complete.
    Normal,
    /// redio retired it (its replica lost a process) or stopped it.
    Retired,
    /// It died: a signal, or an exit in the middle of an MPI job.
    Failed,
}

/// How the application ended: from its status and (under `redio run`) its
/// event file, which says whether redio retired or stopped it and whether
/// it reached `MPI_Finalize`.
fn end_of(status: ExitStatus, plan: &Plan) -> End {
    let from_status = if status.code().is_some() {
        End::Normal
    } else {
        End::Failed
    };
    let (Some(dir), Some(world)) = (&plan.run_dir, plan.role.world_rank) else {
        return from_status;
    };
    let Ok(text) = std::fs::read_to_string(dir.join(format!("rank-{world}.jsonl"))) else {
        return from_status;
    };
    let (mut started, mut finished, mut retired, mut how) = (false, false, false, None);
    for line in text.lines() {
        if let Ok(record) = serde_json::from_str::<Record>(line) {
            started |= record.event == Event::Started;
            finished |= record.event == Event::Finished;
            retired |= matches!(record.event, Event::Retired { .. } | Event::RankLost { .. });
        } else if let Ok(Life {
            event: LifeEvent::Exit { how: h, .. },
            ..
        }) = serde_json::from_str::<Life>(line)
        {
            how = Some(h);
        }
    }
    match how {
        Some(ExitHow::Retired | ExitHow::RankLost) => End::Retired,
        _ if retired => End::Retired,
        Some(ExitHow::Signal) => End::Failed,
        _ if from_status == End::Failed || (started && !finished) => End::Failed,
        _ => End::Normal,
    }
}

/// Writes whole lines so that the launcher, which forwards what it reads
/// from each process as it comes, never gets half a line: to a pipe in
/// writes of at most `PIPE_BUF` bytes that end at a line's end (atomic),
/// to a terminal one line per write (as a line-buffered program writes;
/// a terminal takes a large write in pieces). A line longer than that goes
/// in one write, and may reach the launcher in pieces, as without redio.
fn write_lines(fd: RawFd, bytes: &[u8]) {
    // SAFETY: isatty has no preconditions.
    let limit = if unsafe { libc::isatty(fd) } == 1 {
        1
    } else {
        libc::PIPE_BUF
    };
    let mut start = 0;
    while start < bytes.len() {
        let rest = &bytes[start..];
        let window = &rest[..rest.len().min(limit)];
        let end = match window.iter().rposition(|&b| b == b'\n') {
            Some(pos) if rest.len() > limit => pos + 1,
            _ if rest.len() <= limit => rest.len(),
            // One line longer than the limit: up to its end.
            _ => rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(rest.len(), |pos| pos + 1),
        };
        write_fd(fd, &rest[..end]);
        start += end;
    }
}

/// Writes all of `bytes` to `fd`; errors (a closed stdout) drop the rest.
fn write_fd(fd: RawFd, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is readable for its length.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n > 0 {
            bytes = &bytes[n as usize..];
        } else if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        } else {
            return;
        }
    }
}

/// A process's start time (clock ticks since boot, `/proc/PID/stat` field
/// 22), or `None` when it is gone or a zombie.
fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces: fields start after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if fields.first() == Some(&"Z") {
        return None;
    }
    fields.get(19)?.parse().ok()
}

fn host_name() -> String {
    let mut host = [0u8; 256];
    // SAFETY: gethostname writes at most `host.len()` bytes.
    unsafe { libc::gethostname(host.as_mut_ptr().cast(), host.len()) };
    let end = host.iter().position(|&b| b == 0).unwrap_or(host.len());
    String::from_utf8_lossy(&host[..end])
        .split_whitespace()
        .next()
        .unwrap_or("?")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_written_in_pieces_arrive_whole_and_in_order() {
        let mut text = Vec::new();
        for i in 0..300 {
            text.extend_from_slice(format!("line {i} {}\n", "x".repeat(i % 50)).as_bytes());
        }
        text.extend_from_slice(&[b'y'; 9000]);
        text.extend_from_slice(b"\nlast without newline");
        let mut fds = [0; 2];
        // SAFETY: pipe writes two descriptors into `fds`.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let (reader, writer) = (fds[0], fds[1]);
        let expected = text.clone();
        let thread = std::thread::spawn(move || {
            write_lines(writer, &text);
            // SAFETY: the descriptor is this thread's.
            unsafe { libc::close(writer) };
        });
        let mut got = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            // SAFETY: `buf` is writable for its length.
            let n = unsafe { libc::read(reader, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                break;
            }
            got.extend_from_slice(&buf[..n as usize]);
        }
        thread.join().unwrap();
        // SAFETY: ours.
        unsafe { libc::close(reader) };
        assert_eq!(got, expected);
    }

    #[test]
    fn this_process_has_a_start_time_and_a_made_up_one_does_not() {
        assert!(start_time(std::process::id() as i32).is_some());
        assert_eq!(start_time(i32::MAX), None);
    }
}
