//! The redundancy schemes and what each one tolerates.

use std::fmt;

/// How a set of ranks protects its members' files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Metadata only (sizes, modes, CRCs): detects damage, repairs nothing.
    Single,
    /// Full copies of each member's logical file on `copies` partners (the
    /// next members of the set, which are in other failure groups).
    Partner {
        /// Number of copies, `1 <= copies < set size`.
        copies: u8,
    },
    /// One XOR parity chunk per row of the set: survives any one loss.
    Xor,
    /// Reed-Solomon with `k` parity chunks per row: survives any `k` losses.
    Rs {
        /// Number of parity chunks per row, `1 <= k < set size`, set size + k <= 256.
        k: u8,
    },
}

/// A scheme that cannot work on a set of the given size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{scheme} cannot protect a set of {size} member(s): {why}")]
pub struct SchemeError {
    /// The scheme, as text.
    pub scheme: String,
    /// The set size.
    pub size: usize,
    /// What is wrong.
    pub why: String,
}

impl Scheme {
    /// How many members of one set may be lost (or damaged) with
    /// everything still rebuildable.
    pub fn tolerance(self) -> usize {
        match self {
            Scheme::Single => 0,
            Scheme::Partner { copies } => copies as usize,
            Scheme::Xor => 1,
            Scheme::Rs { k } => k as usize,
        }
    }

    /// Smallest set this scheme can protect.
    pub fn min_set_size(self) -> usize {
        match self {
            Scheme::Single => 1,
            _ => self.tolerance() + 1,
        }
    }

    /// Checks that the scheme can protect a set of `size` members.
    pub fn validate(self, size: usize) -> Result<(), SchemeError> {
        let fail = |why: String| {
            Err(SchemeError {
                scheme: self.to_string(),
                size,
                why,
            })
        };
        if size == 0 {
            return fail("a set needs at least one member".into());
        }
        if size > 255 {
            return fail("a set holds at most 255 members".into());
        }
        match self {
            Scheme::Single => Ok(()),
            Scheme::Partner { copies: 0 } => fail("PARTNER needs at least 1 copy".into()),
            Scheme::Rs { k: 0 } => fail("RS needs k >= 1".into()),
            Scheme::Rs { k } if size + k as usize > 256 => fail(format!(
                "RS needs set size + k <= 256, got {}",
                size + k as usize
            )),
            _ if size < self.min_set_size() => fail(format!(
                "it needs at least {} members in distinct failure groups",
                self.min_set_size()
            )),
            _ => Ok(()),
        }
    }

    /// The number that the redundancy-file format stores for the scheme.
    pub fn code(self) -> u8 {
        match self {
            Scheme::Single => 0,
            Scheme::Partner { .. } => 1,
            Scheme::Xor => 2,
            Scheme::Rs { .. } => 3,
        }
    }

    /// The scheme's parameter (copies for PARTNER, k for RS, else 0).
    pub fn param(self) -> u8 {
        match self {
            Scheme::Partner { copies } => copies,
            Scheme::Rs { k } => k,
            _ => 0,
        }
    }

    /// The inverse of [`Scheme::code`] and [`Scheme::param`].
    pub fn from_code(code: u8, param: u8) -> Option<Scheme> {
        match (code, param) {
            (0, 0) => Some(Scheme::Single),
            (1, c) => Some(Scheme::Partner { copies: c }),
            (2, 0) => Some(Scheme::Xor),
            (3, k) => Some(Scheme::Rs { k }),
            _ => None,
        }
    }

    /// Parses `single`, `partner:C`, `xor`, `rs:K` (case-insensitive).
    pub fn parse(text: &str) -> Result<Scheme, String> {
        let lower = text.trim().to_ascii_lowercase();
        let (name, arg) = match lower.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (lower.as_str(), None),
        };
        let number = |what: &str| -> Result<u8, String> {
            let a =
                arg.ok_or_else(|| format!("`{text}`: {what} needs a number, e.g. `{name}:2`"))?;
            a.parse::<u8>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| format!("`{text}`: `{a}` is not a number from 1 to 255"))
        };
        match name {
            "single" if arg.is_none() => Ok(Scheme::Single),
            "xor" if arg.is_none() => Ok(Scheme::Xor),
            "partner" => Ok(Scheme::Partner {
                copies: number("partner")?,
            }),
            "rs" => Ok(Scheme::Rs { k: number("rs")? }),
            _ => Err(format!(
                "`{text}` is not a scheme; expected single, partner:C, xor or rs:K"
            )),
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scheme::Single => write!(f, "SINGLE"),
            Scheme::Partner { copies } => write!(f, "PARTNER(copies={copies})"),
            Scheme::Xor => write!(f, "XOR"),
            Scheme::Rs { k } => write!(f, "RS(k={k})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_of_each_scheme() {
        assert!(Scheme::Single.validate(1).is_ok());
        assert!(Scheme::Xor.validate(1).is_err());
        assert!(Scheme::Xor.validate(2).is_ok());
        assert!(Scheme::Rs { k: 2 }.validate(2).is_err());
        assert!(Scheme::Rs { k: 2 }.validate(3).is_ok());
        assert!(Scheme::Rs { k: 2 }.validate(254).is_ok());
        let e = Scheme::Rs { k: 3 }.validate(254).unwrap_err();
        assert!(e.to_string().contains("256"), "{e}");
        assert!(Scheme::Partner { copies: 1 }.validate(2).is_ok());
        assert!(Scheme::Partner { copies: 2 }.validate(2).is_err());
        assert!(Scheme::Rs { k: 0 }.validate(5).is_err());
    }

    #[test]
    fn parse_and_code_round_trip() {
        for s in ["single", "xor", "rs:2", "partner:1", "RS:7"] {
            let scheme = Scheme::parse(s).unwrap();
            assert_eq!(
                Scheme::from_code(scheme.code(), scheme.param()),
                Some(scheme)
            );
        }
        assert!(Scheme::parse("rs").unwrap_err().contains("needs a number"));
        assert!(Scheme::parse("rs:0").is_err());
        assert!(Scheme::parse("raid6").unwrap_err().contains("not a scheme"));
        assert_eq!(Scheme::from_code(9, 0), None);
    }
}
