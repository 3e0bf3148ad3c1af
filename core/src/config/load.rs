//! Loading: where the text comes from, and the steps it goes through.
//!
//! 1. bytes → UTF-8 text (invalid bytes are reported with their position);
//! 2. a lenient first pass reads only `version`: a file for another schema
//!    version is told so in one message instead of many unknown keys;
//! 3. serde-saphyr parses the schema ([`raw`](super::raw)); a syntax error,
//!    unknown key, duplicate key or YAML tag ([`tags`](super::tags)) ends
//!    the check here with one diagnostic;
//! 4. [`validate`](super::validate) converts every value and applies the
//!    environment, collecting all remaining problems.

use super::diagnostics::{from_yaml_error, line_col, ConfigError, Diagnostic};
use super::env::{CONFIG_VAR, ENV_PREFIX};
use super::keys::TOP_KEYS;
use super::raw::{MapOf, Node, RawDoc, VersionProbe};
use super::schema::Config;
use super::validate::{resolve, version_problem, EnvInput, FileInput};
use redio_parity::safe_fs::{read_bounded, Links};
use serde_saphyr::NonFiniteFloatPolicy;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The largest configuration file read (1 MiB): a FIFO or `/dev/zero`
/// named as the configuration is refused instead of read until memory
/// runs out.
pub const MAX_CONFIG_LEN: u64 = 1 << 20;

impl Config {
    /// Loads the configuration with its precedence, highest first:
    /// `REDIO_*` variables, the file, the built-in defaults.
    ///
    /// The file is `explicit` if given (the CLI's `--config`), else the one
    /// `REDIO_CONFIG` names, else there is none. `env` looks variables up;
    /// pass `&|name| std::env::var(name).ok()` for the process environment.
    /// A lookup function cannot list variables, so misspelled `REDIO_*`
    /// names are only reported by [`Config::load_from_vars`] and
    /// [`Config::load_process_env`].
    pub fn load(
        explicit: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        load_with(explicit, env, &[])
    }

    /// Like [`Config::load`], from a complete list of environment variables,
    /// so that a `REDIO_<SECTION>_…` variable that names no key is an error.
    pub fn load_from_vars<K: AsRef<str>, V: AsRef<str>>(
        explicit: Option<&Path>,
        vars: &[(K, V)],
    ) -> Result<Config, ConfigError> {
        let map: HashMap<&str, &str> = vars.iter().map(|(k, v)| (k.as_ref(), v.as_ref())).collect();
        let names: Vec<String> = map.keys().map(|k| k.to_string()).collect();
        load_with(
            explicit,
            &|name| map.get(name).map(|v| v.to_string()),
            &names,
        )
    }

    /// [`Config::load_from_vars`] over the real process environment: what the
    /// CLI and world rank 0 use. A `REDIO_*` value that is not valid
    /// Unicode reaches the checks with U+FFFD in place of the bad bytes (and
    /// is refused there, naming the variable); other variables that are not
    /// valid Unicode are skipped.
    pub fn load_process_env(explicit: Option<&Path>) -> Result<Config, ConfigError> {
        let vars: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| {
                let k = k.into_string().ok()?;
                let v = match v.into_string() {
                    Ok(v) => v,
                    Err(v) if k.starts_with(ENV_PREFIX) => v.to_string_lossy().into_owned(),
                    Err(_) => return None,
                };
                Some((k, v))
            })
            .collect();
        Config::load_from_vars(explicit, &vars)
    }

    /// Parses configuration text, then applies the `REDIO_*` variables `env`
    /// knows (pass `&|_| None` to read the text alone, e.g. the broadcast
    /// [`Config::to_yaml`] of rank 0). `file_name` is used in diagnostics.
    pub fn from_yaml_str(
        text: &str,
        file_name: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let env = EnvInput {
            lookup: env,
            overrides: true,
            names: &[],
        };
        build(Some((text, file_name)), env).map_err(|diagnostics| ConfigError { diagnostics })
    }
}

/// Every problem in the file at `path` (empty: the file is valid).
///
/// Checks the file on its own: `REDIO_*` variables are not applied, but
/// `${VAR}` references are resolved from the process environment.
pub fn check_file(path: &Path) -> Vec<Diagnostic> {
    let name = path.display().to_string();
    let lookup = |var: &str| std::env::var(var).ok();
    read(path, &name, false)
        .and_then(|bytes| decode(&bytes, &name).map(|text| check_str(text, &name, &lookup)))
        .unwrap_or_else(|diagnostic| vec![diagnostic])
}

/// Every problem in configuration `text` named `file_name`, with `${VAR}`
/// references resolved by `env` (empty: the text is valid).
pub fn check_str(
    text: &str,
    file_name: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<Diagnostic> {
    let env = EnvInput {
        lookup: env,
        overrides: false,
        names: &[],
    };
    build(Some((text, file_name)), env)
        .err()
        .unwrap_or_default()
}

fn load_with(
    explicit: Option<&Path>,
    lookup: &dyn Fn(&str) -> Option<String>,
    names: &[String],
) -> Result<Config, ConfigError> {
    let named_by_env = explicit.is_none();
    let path = explicit.map(Path::to_path_buf).or_else(|| {
        lookup(CONFIG_VAR)
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
    });
    let env = EnvInput {
        lookup,
        overrides: true,
        names,
    };
    let result = match &path {
        None => build(None, env),
        Some(path) => {
            let name = path.display().to_string();
            read(path, &name, named_by_env)
                .and_then(|bytes| decode(&bytes, &name).map(|text| build(Some((text, &name)), env)))
                .unwrap_or_else(|diagnostic| Err(vec![diagnostic]))
        }
    };
    result.map_err(|diagnostics| ConfigError { diagnostics })
}

fn read(path: &Path, name: &str, named_by_env: bool) -> Result<Vec<u8>, Diagnostic> {
    read_bounded(path, Links::Follow, MAX_CONFIG_LEN, "configuration file").map_err(|error| {
        let by = if named_by_env {
            format!(" named by {CONFIG_VAR}")
        } else {
            String::new()
        };
        // The diagnostic names the file already.
        let text = error.to_string();
        let text = text.strip_prefix(&format!("{name}: ")).unwrap_or(&text);
        Diagnostic::new(
            name,
            0,
            0,
            format!("cannot read the configuration file{by}: {text}"),
        )
    })
}

/// The bytes as text, or the position of the first byte that is not UTF-8.
fn decode<'a>(bytes: &'a [u8], name: &str) -> Result<&'a str, Diagnostic> {
    std::str::from_utf8(bytes).map_err(|error| {
        let valid = bytes.get(..error.valid_up_to()).unwrap_or_default();
        let (line, col) = line_col(&String::from_utf8_lossy(valid));
        let byte = bytes.get(error.valid_up_to()).copied().unwrap_or_default();
        Diagnostic::new(
            name,
            line,
            col,
            format!("not UTF-8 text (byte 0x{byte:02x}); a configuration file must be UTF-8 YAML"),
        )
    })
}

/// Parses and validates; `None` means no file, only defaults and environment.
fn build(file: Option<(&str, &str)>, env: EnvInput) -> Result<Config, Vec<Diagnostic>> {
    match file {
        None => resolve(None, env),
        Some((text, name)) => {
            let doc = parse(text, name).map_err(|d| vec![d])?;
            resolve(
                Some(FileInput {
                    name,
                    text,
                    doc: &doc,
                }),
                env,
            )
        }
    }
}

/// Steps 2 and 3 of the module documentation.
fn parse(text: &str, name: &str) -> Result<RawDoc, Diagnostic> {
    let options = || {
        serde_saphyr::options! {
            // `.inf` and `.nan` reach the validator as text and are refused there.
            non_finite_float_policy: NonFiniteFloatPolicy::AsString,
            // YAML 1.2 booleans only: `yes`, `no`, `on` stay text, so that
            // `enabled: yes` is refused as in REDIO_VOTING_ENABLED=yes and
            // `fs_types: [no]` is not a boolean.
            strict_booleans: true,
            with_snippet: false,
        }
    };
    if let Some(tag) = super::tags::refuse_tags(text, name) {
        return Err(tag);
    }
    let probe = serde_saphyr::from_str_with_options::<Option<MapOf<VersionProbe>>>(text, options())
        .map_err(|e| from_yaml_error(name, &e))?;
    if let Some(MapOf::Map(VersionProbe {
        version: Some(version),
    })) = &probe
    {
        if let Some((pos, message)) = version_problem(Some(version)) {
            return Err(Diagnostic::new(name, pos.line, pos.col, message));
        }
    }
    let doc: Option<Node<MapOf<RawDoc>>> = serde_saphyr::from_str_with_options(text, options())
        .map_err(|e| from_yaml_error(name, &e))?;
    match doc {
        // An empty file: every key unset (so `version` is reported missing).
        None => Ok(RawDoc::default()),
        Some(Node {
            value: MapOf::Map(doc),
            ..
        }) => Ok(doc),
        Some(Node {
            value: MapOf::Wrong(found),
            pos,
        }) => Err(Diagnostic::new(
            name,
            pos.line,
            pos.col,
            format!(
                "the top level must be a mapping with the keys {}, found {}",
                TOP_KEYS.join(", "),
                found.describe()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::keys::{scalars, SECTIONS};
    use crate::config::raw::Found;
    use std::collections::BTreeMap;

    /// The text of `section.key` in `config.to_yaml()`.
    fn value_of(config: &Config, section: &str, key: &str) -> String {
        let yaml = config.to_yaml();
        let doc: BTreeMap<String, MapOf<BTreeMap<String, Found>>> =
            serde_saphyr::from_str(&yaml).unwrap();
        match doc.get(section) {
            Some(MapOf::Map(keys)) => match keys.get(key) {
                Some(Found::Text(t) | Found::Scalar(t)) => t.clone(),
                other => format!("{other:?}"),
            },
            _ => panic!("no section {section} in\n{yaml}"),
        }
    }

    /// (section, key, other keys of the section the value needs, file value, env value)
    const PRECEDENCE: &[(&str, &str, &str, &str, &str)] = &[
        ("replication", "degree", "", "2", "3"),
        ("replication", "layout", "", "cyclic", "block"),
        (
            "replication",
            "map_file",
            "  layout: map\n",
            "/m/file.txt",
            "/m/env.txt",
        ),
        ("replication", "source", "", "external", "builtin"),
        ("io", "read", "", "chained", "none"),
        ("io", "write", "", "distributed", "none"),
        ("io", "chunk_size", "", "2MiB", "4KiB"),
        ("io", "readers", "", "3", "1"),
        ("voting", "checksum", "", "crc32", "crc32"),
        ("voting", "enabled", "", "false", "true"),
        ("voting", "on_mismatch", "", "warn", "abort"),
        ("faults", "timeout", "", "20s", "3s"),
        ("faults", "heartbeat", "", "2s", "500ms"),
        ("faults", "heartbeat_dir", "", "/hb/file", "/hb/env"),
        ("faults", "on_replica_failure", "", "abort", "continue"),
        ("parity", "scheme", "", "xor", "rs"),
        ("parity", "set_size", "", "4", "16"),
        ("parity", "rs_parity", "", "3", "1"),
        ("parity", "when", "", "close", "manual"),
        ("parity", "failure_group", "", "g{rank}", "h{rank}"),
        ("parity", "engine", "", "reduce_scatter", "ring"),
        ("parity", "dir", "", "/parity/file", "/parity/env"),
        ("log", "level", "", "info", "trace"),
        ("log", "file", "", "/l/{rank}.log", "/l/{replica}.log"),
    ];

    #[test]
    fn env_beats_file_beats_default_for_every_scalar_key() {
        let tested: Vec<(&str, &str)> = PRECEDENCE.iter().map(|p| (p.0, p.1)).collect();
        let all: Vec<(&str, &str)> = scalars().iter().map(|s| (s.section, s.key)).collect();
        assert_eq!(tested, all, "every scalar key needs a precedence case");

        let default = Config::default();
        for (section, key, context, file_value, env_value) in PRECEDENCE {
            let yaml = format!("version: 1\n{section}:\n{context}  {key}: {file_value}\n");
            let var = crate::config::env_var_name(section, key);
            let from_file = Config::from_yaml_str(&yaml, "p.yaml", &|_| None).unwrap();
            assert_eq!(
                value_of(&from_file, section, key),
                *file_value,
                "{var}: file"
            );
            // (voting.checksum has a single value, so it cannot differ.)
            if file_value != env_value {
                assert_ne!(
                    from_file, default,
                    "{var}: the file value must differ from the default"
                );
            }

            let env = |name: &str| (name == var).then(|| env_value.to_string());
            let overridden = Config::from_yaml_str(&yaml, "p.yaml", &env).unwrap();
            assert_eq!(
                value_of(&overridden, section, key),
                *env_value,
                "{var}: env"
            );

            // Other keys are untouched by the variable.
            let reread = format!("version: 1\n{section}:\n{context}  {key}: {env_value}\n");
            let expected = Config::from_yaml_str(&reread, "p.yaml", &|_| None).unwrap();
            assert_eq!(overridden, expected, "{var}: only this key changes");
        }
    }

    #[test]
    fn without_a_file_the_defaults_and_env_apply() {
        let none = |_: &str| None;
        assert_eq!(Config::load(None, &none).unwrap(), Config::default());
        let vars = [
            ("REDIO_REPLICATION_DEGREE", "3"),
            ("REDIO_IO_WRITE", "none"),
        ];
        let config = Config::load_from_vars(None, &vars).unwrap();
        assert_eq!(config.replication.degree, 3);
        assert_eq!(config.io.write, crate::config::WriteProtocol::None);
        assert_eq!(config.io.read, crate::config::ReadProtocol::Simple);
    }

    /// The parity crate's own switches look like `parity` keys; a user who
    /// exported one (docs/parity.md) could not start a job.
    #[test]
    fn the_parity_crates_switches_are_not_configuration() {
        let vars = [
            ("REDIO_PARITY_PROGRESS", "off"),
            ("REDIO_PARITY_KERNEL", "scalar"),
        ];
        assert_eq!(
            Config::load_from_vars(None, &vars).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn empty_variables_are_ignored() {
        let vars = [("REDIO_REPLICATION_DEGREE", ""), ("REDIO_LOG_LEVEL", "")];
        assert_eq!(
            Config::load_from_vars(None, &vars).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn bad_variables_name_themselves() {
        let vars = [
            ("REDIO_REPLICATION_DEGREE", "5"),
            ("REDIO_REPLICATION_DEGRE", "3"),
            ("REDIO_IO_RULES", "x"),
            ("REDIO_REMAP_TO", "/x"),
            ("REDIO_CONFIG", ""),
            ("REDIO_MPI", "mpich"),
            ("REDIO_EXTERNAL_RANK", "0"),
            ("REDIO_TEST_ANYTHING", "1"),
            ("HOME", "/home/u"),
        ];
        let error = Config::load_from_vars(None, &vars).unwrap_err();
        let mut lines: Vec<String> = error.diagnostics.iter().map(|d| d.to_string()).collect();
        lines.sort();
        assert_eq!(
            lines,
            [
                "REDIO_IO_RULES=x: io.rules is a list and cannot be set from the environment (set it in the configuration file)",
                "REDIO_REMAP_TO=/x: remap is a list of mappings and cannot be set from the environment (set it in the configuration file)",
                "REDIO_REPLICATION_DEGRE=3: unknown setting replication.degre (the variables for replication are REDIO_REPLICATION_DEGREE, REDIO_REPLICATION_LAYOUT, REDIO_REPLICATION_MAP_FILE, REDIO_REPLICATION_SOURCE); did you mean REDIO_REPLICATION_DEGREE?",
                "REDIO_REPLICATION_DEGREE=5: replication.degree: 5 is out of range (allowed: 1 to 3)",
            ]
        );
    }

    #[test]
    fn combinations_are_checked_after_the_environment() {
        let yaml = "version: 1\nfaults:\n  timeout: 5s\n";
        let env = |name: &str| (name == "REDIO_FAULTS_HEARTBEAT").then(|| "6s".to_string());
        let error = Config::from_yaml_str(yaml, "c.yaml", &env).unwrap_err();
        assert_eq!(
            error.to_string(),
            "REDIO_FAULTS_HEARTBEAT=6s: faults.heartbeat: 6s must be shorter than faults.timeout (5s)"
        );
        // The environment can also repair the file's combination.
        let yaml = "version: 1\nreplication:\n  layout: map\n";
        let env = |name: &str| (name == "REDIO_REPLICATION_LAYOUT").then(|| "cyclic".to_string());
        assert!(Config::from_yaml_str(yaml, "c.yaml", &env).is_ok());
    }

    #[test]
    fn interpolation_uses_the_given_environment() {
        let yaml = "version: 1
shared:
  paths: [\"${SCRATCH}\", \"${WORK:-/work}\", \"/lit/$${SCRATCH}\", /cost$]
log:
  file: ${LOGDIR:-/tmp}/r{replica}.log
replication:
  degree: ${DEGREE}
";
        let env = |name: &str| match name {
            "SCRATCH" => Some("/scratch/u1".to_string()),
            "DEGREE" => Some("2".to_string()),
            _ => None,
        };
        let config = Config::from_yaml_str(yaml, "i.yaml", &env).unwrap();
        assert_eq!(
            config.shared.paths,
            ["/scratch/u1", "/work", "/lit/${SCRATCH}", "/cost$"]
        );
        assert_eq!(config.log.file.as_deref(), Some("/tmp/r{replica}.log"));
        assert_eq!(config.replication.degree, 2);
        // Values of REDIO_* variables are taken literally.
        let env = |name: &str| {
            (name == "REDIO_FAULTS_HEARTBEAT_DIR").then(|| "/x/${SCRATCH}".to_string())
        };
        let config = Config::from_yaml_str("version: 1\n", "i.yaml", &env).unwrap();
        assert_eq!(config.faults.heartbeat_dir, Some("/x/${SCRATCH}".into()));
    }

    #[test]
    fn to_yaml_round_trips() {
        let mut tricky = Config::from_yaml_str(
            include_str!("../../../configs/triple-redundancy.yaml"),
            "t.yaml",
            &|_| None,
        )
        .unwrap();
        tricky.shared.paths = vec![
            "/a: b".into(),
            "/#not a comment".into(),
            "/${HOME}/$$x".into(),
            "/é/ü".into(),
            "/line\nbreak".into(),
            "/trailing ".into(),
        ];
        tricky.shared.fs_types = vec!["true".into(), "123".into(), "null".into(), "~".into()];
        tricky.replication.layout = crate::config::Layout::Map;
        tricky.replication.map_file = Some("/maps/$USER map.txt".into());
        tricky.io.chunk_size = 1536;
        tricky.faults.heartbeat = std::time::Duration::from_micros(1500);
        tricky.parity.scheme = crate::config::ParityScheme::Rs;
        tricky.parity.dir = Some("/parity dir/{rank}".into());
        tricky.remap = vec![crate::config::Remap {
            prefix: "/scratch/out".into(),
            to: "/scratch/out-{replica}/{rank}".into(),
        }];
        for config in [Config::default(), tricky] {
            let yaml = config.to_yaml();
            let back = Config::from_yaml_str(&yaml, "wire", &|_| None);
            assert_eq!(back.as_ref(), Ok(&config), "{yaml}");
        }
    }

    #[test]
    fn section_tables_agree_with_the_serde_schema() {
        for (section, keys) in SECTIONS.iter().filter(|(_, keys)| !keys.is_empty()) {
            let yaml = format!("version: 1\n{section}:\n  no_such_key: 1\n");
            let diagnostics = check_str(&yaml, "s.yaml", &|_| None);
            let expected = format!(
                "unknown field \"no_such_key\" in {section} (expected: {})",
                keys.join(", ")
            );
            assert_eq!(diagnostics.len(), 1);
            assert_eq!(diagnostics[0].message, expected);
        }
    }
}
