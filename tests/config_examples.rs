//! Every example in `configs/` is valid, loads, and survives the wire format.

use redio::config::{check_file, Config};
use std::path::PathBuf;

fn examples() -> Vec<PathBuf> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/configs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    files
}

#[test]
fn the_documented_examples_exist() {
    let names: Vec<String> = examples()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for expected in [
        "full-reference.yaml",
        "minimal.yaml",
        "triple-redundancy.yaml",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "configs/{expected} is missing"
        );
    }
}

#[test]
fn every_example_is_valid_and_round_trips() {
    let none = |_: &str| None;
    for path in examples() {
        let diagnostics = check_file(&path);
        assert!(
            diagnostics.is_empty(),
            "{}: {diagnostics:#?}",
            path.display()
        );
        let config = Config::load(Some(&path), &none).unwrap();
        let back = Config::from_yaml_str(&config.to_yaml(), "wire", &none).unwrap();
        assert_eq!(back, config, "{}", path.display());
    }
}

#[test]
fn the_full_reference_shows_exactly_the_defaults() {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/full-reference.yaml"
    ));
    let config = Config::load(Some(&path), &|_| None).unwrap();
    assert_eq!(config, Config::default());
}
