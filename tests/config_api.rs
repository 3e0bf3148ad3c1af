//! The public loading API with real files: which file is read, precedence,
//! and how problems are reported.

use redio::config::{Config, ConfigError, LogLevel, ReadProtocol, WriteProtocol};
use std::path::{Path, PathBuf};

/// A scratch directory that removes itself.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("redio-config-api-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn the_explicit_file_wins_over_redio_config() {
    let dir = Scratch::new("explicit");
    let explicit = dir.file("explicit.yaml", "version: 1\nreplication:\n  degree: 2\n");
    let named = dir.file("named.yaml", "version: 1\nreplication:\n  degree: 3\n");
    let vars = [("REDIO_CONFIG", text(&named))];
    assert_eq!(
        Config::load_from_vars(Some(&explicit), &vars)
            .unwrap()
            .replication
            .degree,
        2
    );
    assert_eq!(
        Config::load_from_vars(None, &vars)
            .unwrap()
            .replication
            .degree,
        3
    );
    let no_vars: [(&str, &str); 0] = [];
    assert_eq!(
        Config::load_from_vars(None, &no_vars).unwrap(),
        Config::default()
    );
}

#[test]
fn environment_file_and_defaults_combine_per_key() {
    let dir = Scratch::new("combine");
    let file = dir.file(
        "job.yaml",
        "version: 1\nreplication:\n  degree: 2\n  layout: cyclic\nlog:\n  level: info\n",
    );
    let vars = [
        ("REDIO_CONFIG".to_string(), text(&file)),
        ("REDIO_REPLICATION_DEGREE".to_string(), "3".to_string()),
        ("REDIO_IO_WRITE".to_string(), "none".to_string()),
    ];
    let config = Config::load_from_vars(None, &vars).unwrap();
    assert_eq!(config.replication.degree, 3, "env beats file");
    assert_eq!(
        config.replication.layout.to_string(),
        "cyclic",
        "file beats default"
    );
    assert_eq!(config.log.level, LogLevel::Info, "file beats default");
    assert_eq!(config.io.write, WriteProtocol::None, "env beats default");
    assert_eq!(config.io.read, ReadProtocol::Simple, "default");
}

#[test]
fn a_lookup_function_works_like_a_list_of_variables() {
    let dir = Scratch::new("lookup");
    let file = dir.file("job.yaml", "version: 1\nparity:\n  scheme: xor\n");
    let path = text(&file);
    let env = move |name: &str| match name {
        "REDIO_CONFIG" => Some(path.clone()),
        "REDIO_PARITY_SET_SIZE" => Some("4".to_string()),
        _ => None,
    };
    let config = Config::load(None, &env).unwrap();
    assert_eq!(
        (config.parity.scheme.to_string(), config.parity.set_size),
        ("xor".to_string(), 4)
    );
}

#[test]
fn file_and_environment_problems_are_reported_together() {
    let dir = Scratch::new("problems");
    let file = dir.file("bad.yaml", "version: 1\nreplication:\n  degree: 7\n");
    let vars = [("REDIO_LOG_LEVEL", "loud")];
    let error: ConfigError = Config::load_from_vars(Some(&file), &vars).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{}:3:11: replication.degree: 7 is out of range (allowed: 1 to 3)\n\
             REDIO_LOG_LEVEL=loud: log.level: unknown level \"loud\" (expected one of: error, warn, info, debug, trace)",
            file.display()
        )
    );
    let source: &dyn std::error::Error = &error;
    assert!(source.to_string().contains("replication.degree"));
}

#[test]
fn a_missing_file_named_by_redio_config_says_so() {
    let vars = [("REDIO_CONFIG", "/nonexistent/job.yaml")];
    let error = Config::load_from_vars(None, &vars).unwrap_err();
    assert_eq!(
        error.to_string(),
        "/nonexistent/job.yaml: cannot read the configuration file named by REDIO_CONFIG: \
         No such file or directory (os error 2)"
    );
}

#[test]
fn the_wire_format_is_stable_text() {
    let yaml = Config::default().to_yaml();
    assert!(
        yaml.starts_with("version: 1\nreplication:\n  degree: 1\n"),
        "{yaml}"
    );
    assert!(yaml.ends_with('\n'));
    for section in [
        "replication:",
        "shared:",
        "local:",
        "remap:",
        "io:",
        "voting:",
        "faults:",
        "parity:",
        "log:",
    ] {
        assert!(
            yaml.lines().any(|l| l.starts_with(section)),
            "{section} missing in\n{yaml}"
        );
    }
}
