//! Every relative link in README.md and docs/**/*.md reaches a file that
//! exists, and every `#anchor` a heading of the file it names: moving text
//! between the docs (docs/lab/) must not leave a reader at a dead link.
//! Anchors are GitHub's: the heading's text in lower case, punctuation
//! dropped, spaces as `-`, `-1`, `-2`, … for repeated headings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The Markdown files the check covers, under `root`.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The lines of `text` outside fenced code blocks.
fn prose(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut fenced = false;
    text.lines().enumerate().filter(move |(_, line)| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// GitHub's anchor of a heading's text.
fn slug(heading: &str) -> String {
    // A link in a heading shows its text only.
    let mut text = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find("](") {
        let Some(close) = rest[open..].find(')') else {
            break;
        };
        text.push_str(&rest[..open]);
        rest = &rest[open + close + 1..];
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown text's headings, repeated ones numbered.
fn anchors(text: &str) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut all = Vec::new();
    for (_, line) in prose(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(line[hashes..].trim().trim_end_matches('#'));
        let count = seen.entry(base.clone()).or_insert(0);
        all.push(if *count == 0 {
            base
        } else {
            format!("{base}-{count}")
        });
        *count += 1;
    }
    all
}

/// The targets of the inline links (`[text](target)`, images too) in a
/// line, code spans left out.
fn link_targets(line: &str) -> Vec<String> {
    let mut plain = String::new();
    for (i, part) in line.split('`').enumerate() {
        if i % 2 == 0 {
            plain.push_str(part);
        }
    }
    let mut targets = Vec::new();
    let mut rest = plain.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find(')').unwrap_or(after.len());
        let target = after[..end].split_whitespace().next().unwrap_or("");
        targets.push(target.trim_matches(['<', '>']).to_string());
        rest = &after[end..];
    }
    targets
}

/// Every broken link of `files`, as `file:line: target (why)`.
fn broken_links(files: &[PathBuf]) -> Vec<String> {
    let mut broken = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in prose(&text) {
            for target in link_targets(line) {
                if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = match target.split_once('#') {
                    Some((path, anchor)) => (path, Some(anchor)),
                    None => (target.as_str(), None),
                };
                let dest = if path.is_empty() {
                    file.clone()
                } else {
                    file.parent().unwrap().join(path)
                };
                let place = format!("{}:{}: {target}", file.display(), n + 1);
                if !dest.exists() {
                    broken.push(format!("{place} (no such file)"));
                    continue;
                }
                let Some(anchor) = anchor else { continue };
                if dest.extension().is_none_or(|e| e != "md") {
                    continue;
                }
                let dest_text = std::fs::read_to_string(&dest).unwrap();
                if !anchors(&dest_text).iter().any(|a| a == anchor) {
                    broken.push(format!("{place} (no such heading)"));
                }
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_and_anchor_in_the_docs_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = markdown_files(root);
    assert!(
        files.iter().any(|f| f.ends_with("docs/benchmarks.md"))
            && files.iter().any(|f| f.ends_with("docs/lab/README.md")),
        "{files:?}"
    );
    let broken = broken_links(&files);
    assert!(
        broken.is_empty(),
        "{} broken links:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

/// The check finds a missing file, a missing heading, and a heading
/// repeated without its number; it accepts what GitHub would.
#[test]
fn a_broken_link_or_anchor_is_reported() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("doc-links");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("lab")).unwrap();
    std::fs::write(
        dir.join("a.md"),
        "# A page\n\n## Runs 6 and 7 (2026-11-28): the `Xeon`, quiet\n\n### Apply\n\n### Apply\n\n\
         ```\n[not a link](gone.md)\n```\n\
         [ok](lab/b.md#the-soak) [ok](#runs-6-and-7-2026-11-28-the-xeon-quiet) [ok](#apply-1)\n\
         `[code](gone.md)` [ok](https://example.org/x)\n\
         [missing file](lab/gone.md) [missing heading](lab/b.md#the-soup) [third](#apply-2)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("lab/b.md"),
        "# B\n\n## The soak\n\n[back](../a.md#a-page)\n",
    )
    .unwrap();
    let files = [dir.join("a.md"), dir.join("lab/b.md")];
    let broken = broken_links(&files);
    let why: Vec<&str> = broken
        .iter()
        .map(|b| b.rsplit_once(": ").unwrap().1)
        .collect();
    assert_eq!(
        why,
        [
            "lab/gone.md (no such file)",
            "lab/b.md#the-soup (no such heading)",
            "#apply-2 (no such heading)"
        ],
        "{broken:#?}"
    );
    assert!(broken[0].contains("a.md:14: "), "{broken:#?}");
}

/// Every investigation in docs/lab/ is listed in its index, so that a
/// name cited elsewhere can be found from there.
#[test]
fn every_lab_file_is_in_the_lab_index() {
    let lab = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/lab");
    let index = std::fs::read_to_string(lab.join("README.md")).unwrap();
    let listed: Vec<String> = prose(&index)
        .flat_map(|(_, line)| link_targets(line))
        .collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&lab).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") && name != "README.md" && !listed.contains(&name) {
            missing.push(name);
        }
    }
    assert!(missing.is_empty(), "not in docs/lab/README.md: {missing:?}");
}
