//! Malformed configurations: each gives one specific diagnostic at the
//! right line and column, and none panics.

use redio::config::{check_file, check_str, Diagnostic};
use std::path::PathBuf;

/// The environment `${VAR}` references see in these tests.
fn env(name: &str) -> Option<String> {
    (name == "SCRATCH").then(|| "/scratch/u1".to_string())
}

/// One malformed file and the diagnostic it must give.
struct Case {
    name: &'static str,
    yaml: &'static str,
    line: usize,
    /// 0: the column is not asserted.
    col: usize,
    message: &'static str,
}

const fn case(
    name: &'static str,
    yaml: &'static str,
    line: usize,
    col: usize,
    message: &'static str,
) -> Case {
    Case {
        name,
        yaml,
        line,
        col,
        message,
    }
}

const CASES: &[Case] = &[
    // Syntax and structure: parsing stops at the first one.
    case("syntax: unclosed flow list", "version: 1\nshared:\n  paths: [/a, /b\n", 3, 10, "invalid YAML: unclosed bracket '['"),
    case("syntax: bad indentation", "version: 1\n  replication: 3\n", 2, 14, "invalid YAML: mapping values are not allowed"),
    case("syntax: unterminated quote", "version: 1\nlog:\n  file: \"/tmp/x\n", 4, 1, "invalid YAML"),
    case("tabs for indentation", "version: 1\nreplication:\n\tdegree: 2\n", 3, 2, "indent with spaces, not tabs"),
    case("unknown key at the top level", "version: 1\nreplicaton:\n  degree: 2\n", 2, 1, "unknown field \"replicaton\" at the top level (expected: version, replication, shared, local, remap, io, voting, faults, parity, log); did you mean \"replication\"?"),
    case("unknown key in a section", "version: 1\nreplication:\n  degre: 2\n", 3, 3, "unknown field \"degre\" in replication (expected: degree, layout, map_file, source)"),
    case("unknown key in a rule", "version: 1\nio:\n  rules:\n    - path: /a/*\n      protocol: simple\n", 5, 7, "unknown field \"protocol\" in an io.rules entry (expected: path, fs_types, open_mode, read, write, chunk_size, readers, voting, on_mismatch)"),
    case("duplicate key", "version: 1\nreplication:\n  degree: 2\n  degree: 3\n", 4, 3, "duplicate key \"degree\""),
    case("duplicate section", "version: 1\nlog:\n  level: info\nlog:\n  level: debug\n", 4, 1, "duplicate key \"log\""),
    case("two documents", "version: 1\n---\nversion: 1\n", 3, 1, "more than one YAML document"),
    case("top level is a scalar", "hello\n", 1, 1, "the top level must be a mapping with the keys version, replication"),
    case("top level is a list", "- version: 1\n", 1, 1, "the top level must be a mapping with the keys version, replication, shared, local, remap, io, voting, faults, parity, log, found a list"),
    case("empty file", "", 1, 1, "missing required key \"version\""),
    case("missing version", "replication:\n  degree: 2\n", 1, 1, "missing required key \"version\" (add \"version: 1\" at the top)"),
    case("version 2", "version: 2\nreplication:\n  degree: 2\n  new_key: x\n", 1, 10, "version: 2 is not supported (this redio reads version 1)"),
    // Values: every one is reported where it is.
    case("wrong type: text for an integer", "version: 1\nreplication:\n  degree: three\n", 3, 11, "replication.degree: expected an integer (1 to 3), found \"three\""),
    case("wrong type: text for a boolean", "version: 1\nvoting:\n  enabled: yes\n", 3, 12, "voting.enabled: expected true or false, found \"yes\""),
    case("wrong type: list for a scalar", "version: 1\nio:\n  read: [simple]\n", 3, 9, "io.read: expected one of: none, simple, extended-simple, read-distribute, chained, chunked-chained, distributed-chunked, auto, found a list"),
    case("list where a mapping is expected", "version: 1\nreplication:\n  - degree: 2\n", 3, 3, "replication: expected a mapping (with keys degree, layout, map_file, source), found a list"),
    case("scalar where a mapping is expected", "version: 1\nfaults: 5s\n", 2, 9, "faults: expected a mapping (with keys timeout, heartbeat, heartbeat_dir, on_replica_failure), found \"5s\""),
    case("mapping where a list is expected", "version: 1\nshared:\n  paths:\n    scratch: /scratch\n", 4, 5, "shared.paths: expected a list (each item an absolute path), found a mapping"),
    case("scalar where a list of mappings is expected", "version: 1\nremap: /a\n", 2, 8, "remap: expected a list of mappings, found \"/a\""),
    case("bad enum value", "version: 1\nreplication:\n  layout: diagonal\n", 3, 11, "replication.layout: unknown layout \"diagonal\" (expected one of: block, cyclic, map)"),
    case("bad write protocol", "version: 1\nio:\n  write: fast\n", 3, 10, "io.write: unknown protocol \"fast\" (expected one of: none, simple, distributed, distributed-separate, auto)"),
    case("bad parity scheme", "version: 1\nparity:\n  scheme: raid6\n", 3, 11, "parity.scheme: unknown scheme \"raid6\" (expected one of: none, single, partner, xor, rs)"),
    case("bad log level", "version: 1\nlog:\n  level: loud\n", 3, 10, "log.level: unknown level \"loud\" (expected one of: error, warn, info, debug, trace)"),
    case("bad checksum", "version: 1\nvoting:\n  checksum: md5\n", 3, 13, "voting.checksum: unknown checksum \"md5\" (expected one of: crc32)"),
    case("degree 0", "version: 1\nreplication:\n  degree: 0\n", 3, 11, "replication.degree: 0 is out of range (allowed: 1 to 3)"),
    case("degree 4", "version: 1\nreplication:\n  degree: 4\n", 3, 11, "replication.degree: 4 is out of range (allowed: 1 to 3)"),
    case("readers 0", "version: 1\nio:\n  readers: 0\n", 3, 12, "io.readers: 0 is out of range (allowed: 1 or more)"),
    case("set_size 1", "version: 1\nparity:\n  set_size: 1\n", 3, 13, "parity.set_size: 1 is out of range (allowed: 2 or more)"),
    case("size with an unknown unit", "version: 1\nio:\n  chunk_size: 12XB\n", 3, 15, "io.chunk_size: unknown unit \"XB\" in \"12XB\""),
    case("negative size", "version: 1\nio:\n  chunk_size: -1\n", 3, 15, "io.chunk_size: \"-1\": a size cannot be negative"),
    case("size with two dots", "version: 1\nio:\n  chunk_size: 1.5.3MiB\n", 3, 15, "io.chunk_size: \"1.5.3MiB\": fractions are not allowed"),
    case("size that overflows", "version: 1\nio:\n  chunk_size: 16EiB\n", 3, 15, "io.chunk_size: \"16EiB\" is too large"),
    case("ambiguous size unit", "version: 1\nio:\n  chunk_size: 4MB\n", 3, 15, "the unit \"MB\" is ambiguous; write MiB"),
    case("zero size", "version: 1\nio:\n  chunk_size: 0\n", 3, 15, "io.chunk_size: \"0\" is too small (the minimum is 1)"),
    case("infinite size", "version: 1\nio:\n  chunk_size: .inf\n", 3, 15, "io.chunk_size: \".inf\" is not a size"),
    case("duration without unit", "version: 1\nfaults:\n  timeout: 500\n", 3, 12, "faults.timeout: \"500\" has no unit (write e.g. 500ms or 500s)"),
    case("duration with an unknown unit", "version: 1\nfaults:\n  timeout: 5 sec\n", 3, 12, "unknown unit \"sec\" in \"5 sec\" (allowed: ns, us, ms, s, m, h)"),
    case("zero duration", "version: 1\nfaults:\n  heartbeat: 0ms\n", 3, 14, "faults.heartbeat: \"0ms\" is too short"),
    case("map layout without map_file", "version: 1\nreplication:\n  degree: 2\n  layout: map\n", 4, 11, "replication.map_file: required when replication.layout is \"map\""),
    case("map_file without map layout", "version: 1\nreplication:\n  map_file: /etc/map.txt\n", 3, 13, "replication.map_file: only used with layout \"map\", but replication.layout is \"block\""),
    case("rs_parity >= set_size", "version: 1\nparity:\n  scheme: rs\n  set_size: 4\n  rs_parity: 4\n", 5, 14, "parity.rs_parity: 4 must be less than parity.set_size (4)"),
    case("rs default parity vs small set", "version: 1\nparity:\n  scheme: rs\n  set_size: 2\n", 4, 13, "parity.rs_parity: 2 must be less than parity.set_size (2)"),
    case("heartbeat >= timeout", "version: 1\nfaults:\n  timeout: 2s\n  heartbeat: 2000ms\n", 4, 14, "faults.heartbeat: 2s must be shorter than faults.timeout (2s)"),
    case("undefined variable", "version: 1\nlog:\n  file: /logs/${NO_SUCH_VAR}/r{rank}.log\n", 3, 15, "log.file: environment variable \"NO_SUCH_VAR\" is not set (used as \"${NO_SUCH_VAR}\"; give a default with ${NO_SUCH_VAR:-value})"),
    case("undefined variable in a quoted list item", "version: 1\nshared:\n  paths: [\"/a\", \"${SCRATCH}/x\", \"/b/${HOMEDIR}\"]\n", 3, 37, "shared.paths[2]: environment variable \"HOMEDIR\" is not set"),
    case("unclosed reference", "version: 1\nparity:\n  dir: ${SCRATCH/parity\n", 3, 8, "parity.dir: unclosed \"${\" (write $$ for a literal $)"),
    case("bad glob", "version: 1\nio:\n  rules:\n    - path: /data/[ab]/*.h5\n      read: chained\n", 4, 13, "io.rules[0].path: \"[\" is not supported in \"/data/[ab]/*.h5\" (the wildcards are *, ** and ?)"),
    case("bad ** in glob", "version: 1\nio:\n  rules:\n    - path: /data/x**\n      write: none\n", 4, 13, "\"**\" must be a whole path component"),
    case("rule that sets nothing", "version: 1\nio:\n  rules:\n    - path: /data/**\n", 4, 7, "io.rules[0]: the rule sets nothing (give at least one of read, write, chunk_size, readers, voting, on_mismatch)"),
    case("rule without path", "version: 1\nio:\n  rules:\n    - read: chained\n", 4, 7, "io.rules[0]: missing key \"path\""),
    case("bad remap placeholder", "version: 1\nremap:\n  - prefix: /scratch\n    to: /scratch/{node}/r{replica}\n", 4, 9, "remap[0].to: unknown placeholder \"{node}\" in \"/scratch/{node}/r{replica}\" (allowed: {replica}, {rank})"),
    case("bad parity.dir placeholder", "version: 1\nparity:\n  dir: /p/{node}/r{rank}\n", 3, 8, "parity.dir: unknown placeholder \"{node}\" in \"/p/{node}/r{rank}\" (allowed: {replica}, {rank})"),
    case("relative remap prefix", "version: 1\nremap:\n  - prefix: scratch\n    to: /s/{replica}\n", 3, 13, "remap[0].prefix: \"scratch\" is not an absolute path (it must start with /)"),
    case("remap entry that is not a mapping", "version: 1\nremap:\n  - /a\n", 3, 5, "remap[0]: expected a mapping, found \"/a\""),
    case("null list item", "version: 1\nlocal:\n  paths: [/tmp, ~]\n", 3, 17, "local.paths[1]: expected an absolute path, found no value"),
    case("bad fs type", "version: 1\nshared:\n  fs_types: [nfs, \"my fs\"]\n", 3, 19, "shared.fs_types[1]: \"my fs\" is not a file-system type name"),
    case("bad log file placeholder", "version: 1\nlog:\n  file: /logs/{rank.log\n", 3, 9, "log.file: unclosed \"{\" in \"/logs/{rank.log\""),
    // Checked here, not at run time (issue 19).
    case("relative parity.files glob", "version: 1\nparity:\n  files: [\"/ckpt/*.dat\", \"ckpt/rank{rank}/*.dat\"]\n", 3, 26, "parity.files[1]: \"ckpt/rank{rank}/*.dat\" is not an absolute path (it must start with /"),
    case("bad parity.files glob", "version: 1\nparity:\n  files: [\"/ckpt/[ab].dat\"]\n", 3, 11, "parity.files[0]: \"[\" is not supported"),
    case("rs beyond GF(2^8)", "version: 1\nparity:\n  scheme: rs\n  set_size: 200\n  rs_parity: 100\n", 5, 14, "parity.rs_parity: 100 with parity.set_size 200 makes 300, but Reed-Solomon over GF(2^8) allows set_size + rs_parity <= 256"),
    // Issue 44: a relative parity.dir resolved against each process's
    // working directory, and YAML tags were dropped or decoded silently.
    case("relative parity.dir", "version: 1\nparity:\n  dir: \"../../etc\"\n", 3, 8, "parity.dir: \"../../etc\" is not an absolute path (it must start with /"),
    case("relative parity.dir template", "version: 1\nparity:\n  dir: parity/r{replica}/rank{rank}\n", 3, 8, "parity.dir: \"parity/r{replica}/rank{rank}\" is not an absolute path"),
    case("unknown YAML tag", "version: 1\nlog:\n  file: !foo /tmp/x.log\n", 3, 9, "YAML tag \"!foo\" is not accepted"),
    case("!!binary tag", "version: 1\nparity:\n  dir: !!binary L3RtcA==\n", 3, 8, "YAML tag \"!!binary\" is not accepted"),
    case("tag on a section", "version: 1\nparity: !secret\n  scheme: xor\n", 2, 9, "YAML tag \"!secret\" is not accepted"),
    case("remap.to escaping through ..", "version: 1\nremap:\n  - prefix: /scratch/out\n    to: /scratch/out/../../../etc/r{replica}\n", 3, 5, "remap[0].to: \"/scratch/out/../../../etc/r{replica}\" leads to \"/etc/r{replica}\" through `..`, outside every declared directory"),
];

#[test]
fn each_malformed_configuration_gives_one_specific_diagnostic() {
    let mut failures = Vec::new();
    for case in CASES {
        let diagnostics = check_str(case.yaml, "bad.yaml", &env);
        let ok = match diagnostics.as_slice() {
            [d] => {
                d.file == "bad.yaml"
                    && d.line == case.line
                    && (case.col == 0 || d.col == case.col)
                    && d.message.contains(case.message)
            }
            _ => false,
        };
        if !ok {
            failures.push(format!("{}: got {diagnostics:#?}", case.name));
        }
    }
    assert!(CASES.len() >= 25);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn independent_problems_are_all_reported() {
    let yaml = "version: 1
replication:
  degree: 4
io:
  write: fast
faults:
  timeout: soon
";
    let diagnostics = check_str(yaml, "three.yaml", &env);
    let positions: Vec<(usize, usize)> = diagnostics.iter().map(|d| (d.line, d.col)).collect();
    assert_eq!(positions, [(3, 11), (5, 10), (7, 12)], "{diagnostics:#?}");
    assert_eq!(
        diagnostics[0].to_string(),
        "three.yaml:3:11: replication.degree: 4 is out of range (allowed: 1 to 3)"
    );
}

/// A scratch file that removes itself.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, bytes: &[u8]) -> TempFile {
        let path =
            std::env::temp_dir().join(format!("redio-config-errors-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn only(diagnostics: Vec<Diagnostic>) -> Diagnostic {
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    diagnostics.into_iter().next().unwrap()
}

#[test]
fn binary_garbage_is_refused_at_the_first_bad_byte() {
    let file = TempFile::new(
        "garbage.yaml",
        b"version: 1\nlog:\n  le\xffvel: \x00\x9f\xfe",
    );
    let d = only(check_file(&file.0));
    assert_eq!((d.line, d.col), (3, 5));
    assert!(d.message.contains("not UTF-8 text (byte 0xff)"), "{d}");
    assert_eq!(d.file, file.0.display().to_string());
}

#[test]
fn control_characters_are_a_syntax_error() {
    let d = only(check_str("version: 1\x00\x01\x02\n", "ctl.yaml", &env));
    assert_eq!(d.line, 1);
    assert!(d.message.starts_with("invalid YAML"), "{d}");
}

#[test]
fn deeply_nested_garbage_is_refused_without_exhausting_the_stack() {
    for open in ["[", "{a: ", "- "] {
        let close = match open {
            "[" => "]",
            "{a: " => "}",
            _ => "",
        };
        let yaml = format!(
            "version: 1\nlog:\n  level: {}x{}\n",
            open.repeat(100_000),
            close.repeat(100_000)
        );
        let d = only(check_str(&yaml, "deep.yaml", &env));
        assert_eq!(d.line, 3, "{d}");
        assert!(d.message.starts_with("invalid YAML"), "{d}");
    }
}

#[test]
fn an_unreadable_file_is_one_clear_diagnostic() {
    let d = only(check_file(std::path::Path::new("/nonexistent/redio.yaml")));
    assert_eq!(
        d.to_string(),
        "/nonexistent/redio.yaml: cannot read the configuration file: No such file or directory (os error 2)"
    );
}

// Random damage to valid files: tests/fuzz_parsers.rs (fuzz_configuration).
