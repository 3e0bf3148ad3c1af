//! The application's stdout and stderr under replication ("output once").
//!
//! Without care, every replica of a logical rank prints the same lines, so a
//! user sees each line `r` times, interleaved. `redio exec` therefore owns
//! the application's stdout and stderr pipes (`src/cli/output.rs`) and cuts
//! what it reads into whole lines ([`LineSplitter`]). In the default mode,
//! [`OutputMode::Once`], only the printing replica of a logical rank (its
//! replica 0, or after a fail-over the survivor that took over) forwards
//! them; in [`OutputMode::All`] every replica forwards its lines prefixed
//! with `[replica K] `. Lines of redio's own diagnostics on stderr (they
//! start with `redio`) always pass, from every process, unprefixed.
//!
//! Under `redio run` every process also records each line it read as one
//! fixed-size [`LineRecord`] (hash, length, first bytes) in the run
//! directory ([`index_path`]), and a small state file ([`state_path`],
//! [`State`]) saying whether it is alive, prints, or ended and how. The
//! records tell a follower how far the printer got (so that after a
//! fail-over it prints from the next line: nothing lost, nothing twice),
//! and let `redio run` compare the replicas' streams at the end
//! ([`find_divergences`]).
//!
//! Everything here is pure or plain file I/O, so it is unit-tested without
//! a launcher.

use serde::Serialize;
use std::path::{Path, PathBuf};

/// Environment variable: the output mode ([`OutputMode::key`]); set by
/// `redio run --output`, default `once`.
pub const ENV_OUTPUT: &str = "REDIO_OUTPUT";

/// What the job's stdout and stderr show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputMode {
    /// Each application line once, whole, as a plain run prints it: from
    /// the printing replica of each logical rank.
    #[default]
    Once,
    /// Every replica's lines, each prefixed with `[replica K] `.
    All,
}

impl OutputMode {
    /// The name used by `--output` and [`ENV_OUTPUT`].
    pub fn key(self) -> &'static str {
        match self {
            OutputMode::Once => "once",
            OutputMode::All => "all",
        }
    }

    /// Parses [`OutputMode::key`].
    pub fn from_key(key: &str) -> Option<Self> {
        match key.trim() {
            "once" => Some(OutputMode::Once),
            "all" => Some(OutputMode::All),
            _ => None,
        }
    }

    /// The mode [`ENV_OUTPUT`] asks for (unset: [`OutputMode::Once`]).
    pub fn from_env() -> Result<Self, String> {
        match std::env::var(ENV_OUTPUT) {
            Err(_) => Ok(OutputMode::Once),
            Ok(value) => OutputMode::from_key(&value)
                .ok_or_else(|| format!("{ENV_OUTPUT}={value}: expected `once` or `all`")),
        }
    }
}

/// The prefix of every line in [`OutputMode::All`].
pub fn replica_prefix(replica: u32) -> String {
    format!("[replica {replica}] ")
}

/// True for a line of redio's own diagnostics (`redio: …`, `redio[world
/// 3]: …`, `redio exec: …`): it passes from every process, unprefixed, and
/// is neither counted nor compared.
pub fn is_redio_line(line: &[u8]) -> bool {
    line.starts_with(b"redio")
}

/// A line longer than this without a newline (binary output) is cut into
/// pieces of this size, each a "line" of its own: the cuts fall at the same
/// bytes in every replica, so comparing and fail-over still work.
pub const MAX_LINE: usize = 16 << 20;

/// Cuts a byte stream into whole lines (each with its `\n`).
#[derive(Debug, Default)]
pub struct LineSplitter {
    pending: Vec<u8>,
}

impl LineSplitter {
    /// Adds `data`; appends every line it completes to `lines`.
    pub fn push(&mut self, data: &[u8], lines: &mut Vec<Vec<u8>>) {
        let mut rest = data;
        while let Some(pos) = rest.iter().position(|&b| b == b'\n') {
            let (head, tail) = rest.split_at(pos + 1);
            self.take(head, lines);
            let line = std::mem::take(&mut self.pending);
            lines.push(line);
            rest = tail;
        }
        self.take(rest, lines);
    }

    /// Appends `bytes` (no newline inside but maybe at the end) to the
    /// pending line, cutting it at [`MAX_LINE`].
    fn take(&mut self, mut bytes: &[u8], lines: &mut Vec<Vec<u8>>) {
        while self.pending.len() + bytes.len() > MAX_LINE {
            let room = MAX_LINE - self.pending.len();
            self.pending.extend_from_slice(&bytes[..room]);
            lines.push(std::mem::take(&mut self.pending));
            bytes = &bytes[room..];
        }
        self.pending.extend_from_slice(bytes);
    }

    /// The final line without a newline, if the stream ended in one.
    pub fn finish(&mut self) -> Option<Vec<u8>> {
        (!self.pending.is_empty()).then(|| std::mem::take(&mut self.pending))
    }
}

/// FNV-1a, 64 bits: the hash of a line in its [`LineRecord`].
pub fn line_hash(line: &[u8]) -> u64 {
    line.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Bytes of one [`LineRecord`] on disk.
pub const RECORD_LEN: usize = 64;

/// Bytes of a line kept in its record, for the divergence report.
pub const PREFIX_LEN: usize = RECORD_LEN - 16;

/// One line of a replica's stream, as recorded in the run directory: its
/// hash, its length and its first [`PREFIX_LEN`] bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineRecord {
    /// [`line_hash`] of the whole line (with its newline).
    pub hash: u64,
    /// Its length in bytes.
    pub len: u64,
    /// Its first bytes (at most [`PREFIX_LEN`]).
    pub prefix: Vec<u8>,
}

impl LineRecord {
    /// The record of `line`.
    pub fn of(line: &[u8]) -> Self {
        LineRecord {
            hash: line_hash(line),
            len: line.len() as u64,
            prefix: line[..line.len().min(PREFIX_LEN)].to_vec(),
        }
    }

    /// Its [`RECORD_LEN`] bytes: hash and length (little-endian), then the
    /// prefix, zero-padded.
    pub fn encode(&self) -> [u8; RECORD_LEN] {
        let mut bytes = [0u8; RECORD_LEN];
        bytes[..8].copy_from_slice(&self.hash.to_le_bytes());
        bytes[8..16].copy_from_slice(&self.len.to_le_bytes());
        bytes[16..16 + self.prefix.len()].copy_from_slice(&self.prefix);
        bytes
    }

    /// Reads back [`LineRecord::encode`]'s bytes.
    pub fn decode(bytes: &[u8; RECORD_LEN]) -> Self {
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or_default());
        let len = word(8);
        let kept = (len as usize).min(PREFIX_LEN);
        LineRecord {
            hash: word(0),
            len,
            prefix: bytes[16..16 + kept].to_vec(),
        }
    }

    /// The line's beginning as text for a report: invalid UTF-8 replaced,
    /// the newline dropped, `…` when the line was longer.
    pub fn text(&self) -> String {
        let mut bytes = self.prefix.as_slice();
        let whole = self.len as usize == bytes.len();
        if whole {
            bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        }
        let mut text = String::from_utf8_lossy(bytes).into_owned();
        if !whole {
            text.push('…');
        }
        text
    }
}

/// One of the application's two output streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    /// Standard output (file descriptor 1).
    Stdout,
    /// Standard error (file descriptor 2).
    Stderr,
}

impl Stream {
    /// Both, in index order (`[Stdout, Stderr]`).
    pub const BOTH: [Stream; 2] = [Stream::Stdout, Stream::Stderr];

    /// `stdout` or `stderr`.
    pub fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }

    /// 0 for stdout, 1 for stderr.
    pub fn index(self) -> usize {
        match self {
            Stream::Stdout => 0,
            Stream::Stderr => 1,
        }
    }
}

/// The records of logical rank `rank`'s replica `replica` for `stream`.
pub fn index_path(dir: &Path, rank: u32, replica: u32, stream: Stream) -> PathBuf {
    dir.join(format!("output-{rank}.{replica}.{}", stream.name()))
}

/// The state file of logical rank `rank`'s replica `replica`.
pub fn state_path(dir: &Path, rank: u32, replica: u32) -> PathBuf {
    dir.join(format!("output-{rank}.{replica}.state"))
}

/// Number of records in an index file so far (0 when it does not exist).
pub fn record_count(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len() / RECORD_LEN as u64)
}

/// Reads every whole record of an index file.
pub fn read_records(path: &Path) -> Vec<LineRecord> {
    let bytes = std::fs::read(path).unwrap_or_default();
    bytes
        .chunks_exact(RECORD_LEN)
        .map(|chunk| LineRecord::decode(chunk.try_into().unwrap_or(&[0; RECORD_LEN])))
        .collect()
}

/// How a replica's `redio exec` ended, in its [`State`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    /// The application ended on its own (not killed, retired or failed):
    /// its streams are complete.
    pub normal: bool,
    /// Per stream ([`Stream::index`]): the lines up to which output has
    /// been printed by this process (its line count if it printed, else 0).
    pub printed: [u64; 2],
}

/// What one replica's state file says. Lines, appended in this order:
/// `pid PID START HOST` (its `redio exec`: process id, start time in clock
/// ticks from `/proc/PID/stat`, host name), `printer FROM_OUT FROM_ERR`
/// when it took over printing, `done normal|abnormal OUT ERR` at the end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct State {
    /// `redio exec`'s process id, start time and host.
    pub process: Option<(i32, u64, String)>,
    /// It prints (took over from the lines given per stream).
    pub took_over: Option<[u64; 2]>,
    /// It ended.
    pub done: Option<Done>,
}

impl State {
    /// Parses a state file's text (unknown or torn lines are skipped).
    pub fn parse(text: &str) -> Self {
        let mut state = State::default();
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let num = |i: usize| words.get(i).and_then(|w| w.parse::<u64>().ok());
            match words.first().copied() {
                Some("pid") => {
                    if let (Some(pid), Some(start), Some(host)) = (num(1), num(2), words.get(3)) {
                        state.process = Some((pid as i32, start, host.to_string()));
                    }
                }
                Some("printer") => {
                    if let (Some(out), Some(err)) = (num(1), num(2)) {
                        state.took_over = Some([out, err]);
                    }
                }
                Some("done") => {
                    if let (Some(how), Some(out), Some(err)) = (words.get(1), num(2), num(3)) {
                        state.done = Some(Done {
                            normal: *how == "normal",
                            printed: [out, err],
                        });
                    }
                }
                _ => {}
            }
        }
        state
    }

    /// The `pid` line.
    pub fn pid_line(pid: i32, start: u64, host: &str) -> String {
        format!("pid {pid} {start} {host}\n")
    }

    /// The `printer` line.
    pub fn printer_line(from: [u64; 2]) -> String {
        format!("printer {} {}\n", from[0], from[1])
    }

    /// The `done` line.
    pub fn done_line(done: Done) -> String {
        format!(
            "done {} {} {}\n",
            if done.normal { "normal" } else { "abnormal" },
            done.printed[0],
            done.printed[1]
        )
    }
}

/// A replica whose output differs from its logical rank's reference
/// replica (the lowest one that completed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Divergence {
    /// The logical rank.
    pub rank: u32,
    /// The diverging replica.
    pub replica: u32,
    /// The replica it was compared with.
    pub reference: u32,
    /// The stream (stdout).
    pub stream: Stream,
    /// The first differing line, from 1.
    pub line: u64,
    /// That line in the reference (its first bytes), `None` past its end.
    pub expected: Option<String>,
    /// That line in the diverging replica, `None` past its end.
    pub found: Option<String>,
}

impl Divergence {
    /// One line for stderr.
    pub fn describe(&self) -> String {
        let show = |line: &Option<String>| match line {
            Some(text) => format!("{text:?}"),
            None => "nothing (its output ended)".to_string(),
        };
        format!(
            "the {} of rank {} replica {} differs from replica {} at line {}: replica {} printed \
             {}, replica {} printed {}",
            self.stream.name(),
            self.rank,
            self.replica,
            self.reference,
            self.line,
            self.reference,
            show(&self.expected),
            self.replica,
            show(&self.found)
        )
    }
}

/// The first line (from 0) where `other` differs from `reference`: within
/// their common length, and past it when both streams are complete.
pub fn first_difference(
    reference: &[LineRecord],
    other: &[LineRecord],
    both_complete: bool,
) -> Option<usize> {
    let common = reference.len().min(other.len());
    (0..common)
        .find(|&i| reference[i].hash != other[i].hash || reference[i].len != other[i].len)
        .or_else(|| (both_complete && reference.len() != other.len()).then_some(common))
}

/// Compares, for every logical rank, each replica's recorded stdout with
/// the reference replica's (the lowest whose process completed, else the
/// lowest recorded). `complete(rank, replica)` says whether that process's
/// streams are complete (it finished); a replica that did not complete is
/// compared only as far as it got.
pub fn find_divergences(
    dir: &Path,
    ranks: u32,
    degree: u32,
    complete: &dyn Fn(u32, u32) -> bool,
) -> Vec<Divergence> {
    let stream = Stream::Stdout;
    let mut found = Vec::new();
    for rank in 0..ranks {
        let recorded: Vec<(u32, Vec<LineRecord>)> = (0..degree)
            .filter_map(|replica| {
                let path = index_path(dir, rank, replica, stream);
                path.exists().then(|| (replica, read_records(&path)))
            })
            .collect();
        let Some(reference) = recorded
            .iter()
            .find(|(replica, _)| complete(rank, *replica))
            .or(recorded.first())
        else {
            continue;
        };
        for (replica, records) in &recorded {
            if replica == &reference.0 {
                continue;
            }
            let both = complete(rank, reference.0) && complete(rank, *replica);
            if let Some(i) = first_difference(&reference.1, records, both) {
                found.push(Divergence {
                    rank,
                    replica: *replica,
                    reference: reference.0,
                    stream,
                    line: i as u64 + 1,
                    expected: reference.1.get(i).map(LineRecord::text),
                    found: records.get(i).map(LineRecord::text),
                });
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]]) -> (Vec<Vec<u8>>, Option<Vec<u8>>) {
        let mut splitter = LineSplitter::default();
        let mut lines = Vec::new();
        for chunk in chunks {
            splitter.push(chunk, &mut lines);
        }
        (lines, splitter.finish())
    }

    #[test]
    fn lines_are_whole_across_reads_and_a_final_partial_line_is_kept() {
        let (lines, rest) = split(&[b"ab", b"c\nde", b"f\n\nxy"]);
        assert_eq!(
            lines,
            vec![b"abc\n".to_vec(), b"def\n".to_vec(), b"\n".to_vec()]
        );
        assert_eq!(rest, Some(b"xy".to_vec()));
        let (lines, rest) = split(&[b"one\n"]);
        assert_eq!(lines, vec![b"one\n".to_vec()]);
        assert_eq!(rest, None);
    }

    #[test]
    fn a_line_longer_than_the_limit_is_cut_at_the_same_bytes_whatever_the_reads() {
        let long = vec![b'x'; MAX_LINE * 2 + 10];
        let mut data = long.clone();
        data.push(b'\n');
        let (a, _) = split(&[&data]);
        let (b, _) = split(&[&data[..7], &data[7..MAX_LINE + 3], &data[MAX_LINE + 3..]]);
        assert_eq!(a, b);
        assert_eq!(a.len(), 3);
        assert_eq!(a[0].len(), MAX_LINE);
        assert_eq!(a[2].len(), 11);
        assert_eq!(a.concat(), data);
    }

    #[test]
    fn records_round_trip_and_show_their_text() {
        let short = LineRecord::of(b"hello\n");
        let back = LineRecord::decode(&short.encode());
        assert_eq!(back, short);
        assert_eq!(back.text(), "hello");
        let long = LineRecord::of(&[b'y'; 100]);
        let back = LineRecord::decode(&long.encode());
        assert_eq!(back.len, 100);
        assert_eq!(back.text(), format!("{}…", "y".repeat(PREFIX_LEN)));
        assert_ne!(line_hash(b"a\n"), line_hash(b"b\n"));
    }

    #[test]
    fn state_files_parse_line_by_line() {
        let text = format!(
            "{}{}{}",
            State::pid_line(42, 7, "node0"),
            State::printer_line([3, 1]),
            State::done_line(Done {
                normal: false,
                printed: [9, 2]
            })
        );
        let state = State::parse(&text);
        assert_eq!(state.process, Some((42, 7, "node0".to_string())));
        assert_eq!(state.took_over, Some([3, 1]));
        assert_eq!(
            state.done,
            Some(Done {
                normal: false,
                printed: [9, 2]
            })
        );
        assert_eq!(State::parse("pid 1 2\ndone"), State::default());
    }

    #[test]
    fn the_first_difference_is_found_and_a_shorter_incomplete_stream_is_not_one() {
        let recs = |lines: &[&str]| -> Vec<LineRecord> {
            lines.iter().map(|l| LineRecord::of(l.as_bytes())).collect()
        };
        let a = recs(&["1\n", "2\n", "3\n"]);
        assert_eq!(
            first_difference(&a, &recs(&["1\n", "2\n", "3\n"]), true),
            None
        );
        assert_eq!(
            first_difference(&a, &recs(&["1\n", "x\n", "3\n"]), true),
            Some(1)
        );
        assert_eq!(first_difference(&a, &recs(&["1\n"]), false), None);
        assert_eq!(first_difference(&a, &recs(&["1\n"]), true), Some(1));
        assert_eq!(
            first_difference(&a, &recs(&["1\n", "2\n", "3\n", "4\n"]), true),
            Some(3)
        );
    }

    #[test]
    fn divergences_name_rank_replica_and_line() {
        let dir = std::env::temp_dir().join(format!("redio-output-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let write = |rank, replica, lines: &[&str]| {
            let bytes: Vec<u8> = lines
                .iter()
                .flat_map(|l| LineRecord::of(l.as_bytes()).encode())
                .collect();
            std::fs::write(index_path(&dir, rank, replica, Stream::Stdout), bytes).unwrap();
        };
        write(0, 0, &["a\n", "b\n"]);
        write(0, 1, &["a\n", "b\n"]);
        write(1, 0, &["a\n", "b\n"]);
        write(1, 1, &["a\n", "B\n"]);
        write(1, 2, &["a\n"]);
        let found = find_divergences(&dir, 2, 3, &|_, _| true);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!((found[0].rank, found[0].replica, found[0].line), (1, 1, 2));
        assert_eq!(found[0].expected.as_deref(), Some("b"));
        assert_eq!(found[0].found.as_deref(), Some("B"));
        assert_eq!((found[1].replica, found[1].found.as_deref()), (2, None));
        assert!(found[0]
            .describe()
            .contains("rank 1 replica 1 differs from replica 0 at line 2"));
        // Replica 2 did not complete: its shorter stream is no divergence.
        let found = find_divergences(&dir, 2, 3, &|_, replica| replica != 2);
        assert_eq!(found.len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
