//! A deterministic mutation fuzzer run as an ordinary test (no nightly
//! toolchain needed): inputs from a seed corpus (`tests/fuzz/corpus/<target>/`,
//! and for the configuration the example files of `configs/`)
//! are mutated by a seeded xorshift generator (bit flips, interesting
//! bytes and integers, insertions, deletions, duplicated ranges, splices
//! with another seed) and handed to a target until the time budget is
//! spent. A panic is caught, the input saved under
//! `target/tmp/fuzz-crashes/<target>/` and the test fails naming it.
//!
//! Budget: `REDIO_FUZZ_SECONDS` per target (default 5; CI may give 60).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The seeded generator.
pub struct Rng(u64);

impl Rng {
    /// A generator from a fixed seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const BYTES: &[u8] = &[
    0, 1, 0x7f, 0x80, 0xff, b'/', b'.', b'\n', b':', b'-', b'{', b'[', b' ',
];
const WORDS: &[u64] = &[
    0,
    1,
    2,
    16,
    255,
    256,
    0x7fff_ffff,
    0xffff_ffff,
    1 << 40,
    (1 << 63) - 1,
    1 << 63,
    u64::MAX,
];

/// One to eight mutations of `input` (`others` for splices).
pub fn mutate(rng: &mut Rng, input: &[u8], others: &[Vec<u8>]) -> Vec<u8> {
    let mut b = input.to_vec();
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(b.len() + 1);
        match rng.below(8) {
            0 if !b.is_empty() => {
                let i = at.min(b.len() - 1);
                b[i] ^= 1 << rng.below(8);
            }
            1 if !b.is_empty() => {
                let i = at.min(b.len() - 1);
                b[i] = BYTES[rng.below(BYTES.len())];
            }
            2 => b.insert(at, BYTES[rng.below(BYTES.len())]),
            3 if !b.is_empty() => {
                let n = 1 + rng.below(16.min(b.len()));
                let i = at.min(b.len() - n);
                b.drain(i..i + n);
            }
            4 => {
                // An interesting little-endian integer of 2, 4 or 8 bytes.
                let w = WORDS[rng.below(WORDS.len())].to_le_bytes();
                let n = [2, 4, 8][rng.below(3)];
                if b.len() >= n {
                    let i = at.min(b.len() - n);
                    b[i..i + n].copy_from_slice(&w[..n]);
                }
            }
            5 if !b.is_empty() => {
                let n = 1 + rng.below(64.min(b.len()));
                let i = rng.below(b.len() - n + 1);
                let piece = b[i..i + n].to_vec();
                let to = at.min(b.len());
                b.splice(to..to, piece);
            }
            6 if !others.is_empty() => {
                let o = &others[rng.below(others.len())];
                if !o.is_empty() {
                    let cut = rng.below(o.len());
                    b.truncate(at.min(b.len()));
                    b.extend_from_slice(&o[cut..]);
                }
            }
            _ => b.truncate(at),
        }
    }
    b
}

/// The seed inputs of `target` (`tests/fuzz/corpus/<target>/`) and of the
/// repository directories `also` (e.g. `configs`), sorted by name.
pub fn corpus(target: &str, also: &[&str]) -> Vec<Vec<u8>> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![repo.join("tests/fuzz/corpus").join(target)];
    dirs.extend(also.iter().map(|d| repo.join(d)));
    let mut names: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|dir| {
            std::fs::read_dir(dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| e.unwrap().path())
        })
        .collect();
    names.sort();
    let seeds: Vec<Vec<u8>> = names.iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert!(!seeds.is_empty(), "{target}: no seed inputs");
    seeds
}

/// The time budget per target.
pub fn budget() -> Duration {
    let secs = std::env::var("REDIO_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(5)
        .min(600);
    Duration::from_secs(secs)
}

/// What a fuzz run did.
#[derive(Debug, Default)]
pub struct Tally {
    /// Inputs tried (seeds included).
    pub tried: u64,
    /// Inputs the parser accepted.
    pub accepted: u64,
}

/// Runs `check` on every seed ([`corpus`] of `target` and `also`), then on
/// mutants until the budget is spent.
/// `check` returns whether the parser accepted the input and panics on a
/// broken property. Panics (the target's or `check`'s) fail the test with
/// the saved input's path.
pub fn run(target: &str, also: &[&str], seed: u64, check: impl Fn(&[u8]) -> bool) -> Tally {
    let seeds = corpus(target, also);
    let mut rng = Rng::new(seed);
    let deadline = Instant::now() + budget();
    let mut tally = Tally::default();
    let one = |input: &[u8], tally: &mut Tally| {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(input)));
        tally.tried += 1;
        match outcome {
            Ok(accepted) => tally.accepted += u64::from(accepted),
            Err(_) => {
                let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
                    .join("fuzz-crashes")
                    .join(target);
                std::fs::create_dir_all(&dir).unwrap();
                let path = dir.join(format!("{:016x}", crc32fast::hash(input)));
                std::fs::write(&path, input).unwrap();
                panic!(
                    "{target}: input {} ({} bytes) panicked; saved to {}",
                    tally.tried,
                    input.len(),
                    path.display()
                );
            }
        }
    };
    for s in &seeds {
        one(s, &mut tally);
    }
    while Instant::now() < deadline {
        let base = &seeds[rng.below(seeds.len())];
        let input = mutate(&mut rng, base, &seeds);
        one(&input, &mut tally);
    }
    eprintln!(
        "fuzz {target}: {} inputs tried, {} accepted, 0 crashes, {:?} budget",
        tally.tried,
        tally.accepted,
        budget()
    );
    tally
}
