//! What the collective `redio parity` job is asked to do: the arguments the
//! CLI passes to its MPI worker processes (as `KEY=VALUE` command-line
//! words, which every launcher forwards unchanged to every node), parsed
//! back by the preload's worker entry point. One type for both sides.

use std::path::PathBuf;

/// The collective operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Compute redundancy files for the files under each rank's root.
    Encode,
    /// Check every member and report.
    Verify,
    /// Rebuild damaged members within the scheme's tolerance.
    Rebuild,
}

impl Operation {
    /// The subcommand name.
    pub fn name(self) -> &'static str {
        match self {
            Operation::Encode => "encode",
            Operation::Verify => "verify",
            Operation::Rebuild => "rebuild",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        [Operation::Encode, Operation::Verify, Operation::Rebuild]
            .into_iter()
            .find(|o| o.name() == s)
    }
}

/// The arguments of one collective job (the same on every rank).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobSpec {
    /// What to do.
    pub op: Operation,
    /// Root of each rank: one template for all ranks (`{rank}` expanded),
    /// or one directory per logical rank.
    pub roots: Vec<String>,
    /// Redundancy file name prefix.
    pub prefix: String,
    /// Piece size in bytes (memory per pipeline buffer).
    pub piece: usize,
    /// Encode only: `single`, `partner:C`, `xor` or `rs:K`.
    pub scheme: String,
    /// Encode only: wanted members per set.
    pub set_size: usize,
    /// Encode only: failure-group template (`{rank}` expanded); empty: the
    /// host name.
    pub group: String,
    /// Directory of each rank's redundancy file (`{rank}` expanded); empty:
    /// the rank's root.
    pub parity_dir: String,
}

/// The placeholder of a root or group template.
pub const RANK_PLACEHOLDER: &str = "{rank}";

impl JobSpec {
    /// The root directory of logical rank `rank` in a job of `size` ranks.
    pub fn root_of(&self, rank: u32, size: u32) -> Result<PathBuf, String> {
        let text = match self.roots.len() {
            1 => self.roots[0].replace(RANK_PLACEHOLDER, &rank.to_string()),
            n if n == size as usize => self.roots[rank as usize].clone(),
            n => {
                return Err(format!(
                    "{n} root directories given for a job of {size} ranks (give one template \
                     with {RANK_PLACEHOLDER}, or one directory per rank)"
                ))
            }
        };
        Ok(PathBuf::from(text))
    }

    /// Where logical rank `rank` keeps its redundancy file: the
    /// `parity_dir` template, or its root.
    pub fn redundancy_dir_of(&self, rank: u32, size: u32) -> Result<PathBuf, String> {
        if self.parity_dir.is_empty() {
            return self.root_of(rank, size);
        }
        Ok(PathBuf::from(
            self.parity_dir.replace(RANK_PLACEHOLDER, &rank.to_string()),
        ))
    }

    /// The command-line words that carry this spec.
    pub fn to_args(&self) -> Vec<String> {
        let mut out = vec![
            format!("op={}", self.op.name()),
            format!("prefix={}", self.prefix),
            format!("piece={}", self.piece),
            format!("scheme={}", self.scheme),
            format!("set_size={}", self.set_size),
            format!("group={}", self.group),
            format!("parity_dir={}", self.parity_dir),
        ];
        out.extend(self.roots.iter().map(|r| format!("root={r}")));
        out
    }

    /// Parses [`JobSpec::to_args`].
    pub fn from_args<S: AsRef<str>>(args: &[S]) -> Result<Self, String> {
        let mut spec = JobSpec {
            op: Operation::Verify,
            roots: Vec::new(),
            prefix: "redio-parity".into(),
            piece: 1 << 20,
            scheme: "xor".into(),
            set_size: 8,
            group: String::new(),
            parity_dir: String::new(),
        };
        let mut op = None;
        for a in args {
            let a = a.as_ref();
            let (k, v) = a
                .split_once('=')
                .ok_or_else(|| format!("worker argument `{a}` is not KEY=VALUE"))?;
            let number = |v: &str| {
                v.parse::<usize>()
                    .map_err(|e| format!("worker argument {k}={v}: {e}"))
            };
            match k {
                "op" => op = Some(Operation::parse(v).ok_or(format!("unknown operation {v}"))?),
                "prefix" => {
                    crate::files::check_prefix(v)?;
                    spec.prefix = v.into()
                }
                "piece" => spec.piece = number(v)?.max(1),
                "scheme" => spec.scheme = v.into(),
                "set_size" => spec.set_size = number(v)?,
                "group" => spec.group = v.into(),
                "parity_dir" => spec.parity_dir = v.into(),
                "root" => spec.roots.push(v.into()),
                _ => return Err(format!("unknown worker argument {k}")),
            }
        }
        spec.op = op.ok_or("no operation given to the worker")?;
        if spec.roots.is_empty() {
            return Err("no root directory given to the worker".into());
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_round_trips_and_expands_roots() {
        let spec = JobSpec {
            op: Operation::Rebuild,
            roots: vec!["/l/ck=pt/rank{rank}".into()],
            prefix: "p".into(),
            piece: 4096,
            scheme: "rs:2".into(),
            set_size: 4,
            group: "node{rank}".into(),
            parity_dir: String::new(),
        };
        let back = JobSpec::from_args(&spec.to_args()).unwrap();
        assert_eq!(back, spec);
        assert_eq!(back.root_of(3, 8).unwrap(), PathBuf::from("/l/ck=pt/rank3"));
        assert_eq!(
            back.redundancy_dir_of(3, 8).unwrap(),
            PathBuf::from("/l/ck=pt/rank3"),
            "no parity dir: the root"
        );
        let apart = JobSpec {
            parity_dir: "/p/r{rank}".into(),
            ..spec.clone()
        };
        assert_eq!(JobSpec::from_args(&apart.to_args()).unwrap(), apart);
        assert_eq!(
            apart.redundancy_dir_of(2, 8).unwrap(),
            PathBuf::from("/p/r2")
        );
        let two = JobSpec {
            roots: vec!["/a".into(), "/b".into()],
            ..spec
        };
        assert_eq!(two.root_of(1, 2).unwrap(), PathBuf::from("/b"));
        assert!(two.root_of(1, 3).is_err());
    }
}
