//! Sizes (`64MiB`) and durations (`500ms`): parsing and exact formatting.
//!
//! Both are a whole number followed by a unit, optionally separated by
//! spaces. Fractions are refused rather than rounded, so that formatting
//! a parsed value gives back exactly the same value (the wire format
//! depends on it).
//!
//! Sizes use binary units only: `K`/`KiB` = 1024 bytes, `M`/`MiB` = 1024²,
//! and so on up to `E`/`EiB`, case-insensitive; no unit or `B` means bytes.
//! `KB`, `MB`, … are refused as ambiguous (1000 or 1024?).
//!
//! Durations need a unit: `ns`, `us`, `ms`, `s`, `m` (minutes), `h`.

use std::time::Duration;

/// Binary size units, largest first (formatting picks the first exact one).
const SIZE_UNITS: &[(&str, u32)] = &[
    ("EiB", 60),
    ("PiB", 50),
    ("TiB", 40),
    ("GiB", 30),
    ("MiB", 20),
    ("KiB", 10),
];

/// Duration units in nanoseconds, largest first.
const DURATION_UNITS: &[(&str, u128)] = &[
    ("h", 3_600_000_000_000),
    ("m", 60_000_000_000),
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("ns", 1),
];

/// Parses a size such as `4096`, `4k`, `64 MiB` or `1GiB` into bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let (number, unit) = split_quantity(text, "size", "e.g. 4096, 64KiB or 1GiB")?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        "t" | "tib" => 40,
        "p" | "pib" => 50,
        "e" | "eib" => 60,
        "kb" | "mb" | "gb" | "tb" | "pb" | "eb" => {
            let letter = unit.get(..1).unwrap_or_default().to_ascii_uppercase();
            let binary = format!("{letter}iB");
            return Err(format!(
                "\"{text}\": the unit \"{unit}\" is ambiguous; write {binary} \
                 (redio sizes use binary units: 1KiB = 1024 bytes)"
            ));
        }
        _ => {
            return Err(format!(
                "unknown unit \"{unit}\" in \"{text}\" (allowed: B, K or KiB, M or MiB, \
                 G or GiB, T or TiB, P or PiB, E or EiB)"
            ))
        }
    };
    number
        .checked_mul(1u64 << shift)
        .ok_or_else(|| format!("\"{text}\" is too large (the maximum is 16EiB - 1 byte)"))
}

/// Formats bytes with the largest binary unit that divides them exactly.
pub fn format_size(bytes: u64) -> String {
    SIZE_UNITS
        .iter()
        .find(|(_, shift)| bytes != 0 && bytes.trailing_zeros() >= *shift)
        .map_or_else(
            || bytes.to_string(),
            |(unit, shift)| format!("{}{unit}", bytes >> shift),
        )
}

/// Parses a duration such as `500ms`, `5s`, `2m` or `1h`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = split_quantity(text, "duration", "e.g. 500ms, 5s or 2m")?;
    if unit.is_empty() {
        return Err(format!(
            "\"{text}\" has no unit (write e.g. {number}ms or {number}s)"
        ));
    }
    let nanos_per_unit = DURATION_UNITS
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|(_, nanos)| *nanos)
        .ok_or_else(|| {
            format!("unknown unit \"{unit}\" in \"{text}\" (allowed: ns, us, ms, s, m, h)")
        })?;
    let nanos = u128::from(number) * nanos_per_unit;
    let secs =
        u64::try_from(nanos / 1_000_000_000).map_err(|_| format!("\"{text}\" is too long"))?;
    // The remainder is below 10^9, so it fits a u32.
    let subsec = (nanos % 1_000_000_000) as u32;
    Ok(Duration::new(secs, subsec))
}

/// Formats a duration with the largest unit that divides it exactly.
pub fn format_duration(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    if nanos == 0 {
        return "0s".to_string();
    }
    DURATION_UNITS
        .iter()
        .find(|(_, per)| nanos % per == 0)
        .map_or_else(
            || format!("{nanos}ns"),
            |(unit, per)| format!("{}{unit}", nanos / per),
        )
}

/// Splits `text` into a whole number and the unit after it.
///
/// `what` and `example` only shape the messages.
fn split_quantity<'a>(text: &'a str, what: &str, example: &str) -> Result<(u64, &'a str), String> {
    let trimmed = text.trim();
    let digits_end = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, rest) = trimmed.split_at(digits_end);
    if trimmed.starts_with('-') {
        return Err(format!("\"{text}\": a {what} cannot be negative"));
    }
    if digits.is_empty() {
        return Err(format!(
            "\"{text}\" is not a {what} (expected a whole number and a unit, {example})"
        ));
    }
    if rest.starts_with('.') || rest.starts_with(',') {
        return Err(format!(
            "\"{text}\": fractions are not allowed (use a whole number with a smaller unit)"
        ));
    }
    let number = digits
        .parse::<u64>()
        .map_err(|_| format!("\"{text}\" is too large"))?;
    Ok((number, rest.trim_start()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        let cases: &[(&str, u64)] = &[
            ("0", 0),
            ("4096", 4096),
            ("4096B", 4096),
            ("4k", 4096),
            ("4K", 4096),
            ("4KiB", 4096),
            ("4kib", 4096),
            ("64 MiB", 64 << 20),
            ("1M", 1 << 20),
            ("1GiB", 1 << 30),
            ("2T", 2 << 40),
            (" 3 PiB ", 3 << 50),
            ("15EiB", 15 << 60),
            ("18446744073709551615", u64::MAX),
        ];
        for (text, bytes) in cases {
            assert_eq!(parse_size(text), Ok(*bytes), "{text}");
        }
    }

    #[test]
    fn bad_sizes_are_refused_with_a_reason() {
        let cases: &[(&str, &str)] = &[
            ("12XB", "unknown unit \"XB\""),
            ("-1", "cannot be negative"),
            ("1.5.3MiB", "fractions are not allowed"),
            ("1.5MiB", "fractions are not allowed"),
            ("16EiB", "too large"),
            ("99999999999999999999", "too large"),
            ("", "is not a size"),
            ("MiB", "is not a size"),
            ("4MB", "ambiguous; write MiB"),
            ("4kB", "ambiguous; write KiB"),
            ("1 2", "unknown unit \"2\""),
            ("0x10", "unknown unit \"x10\""),
        ];
        for (text, message) in cases {
            let err = parse_size(text).unwrap_err();
            assert!(err.contains(message), "{text}: {err}");
        }
    }

    #[test]
    fn sizes_format_exactly_and_round_trip() {
        let cases: &[(u64, &str)] = &[
            (0, "0"),
            (1000, "1000"),
            (1024, "1KiB"),
            (1536, "1536"),
            (3 << 19, "1536KiB"),
            (1 << 20, "1MiB"),
            (5 << 40, "5TiB"),
            (u64::MAX, "18446744073709551615"),
            (1 << 63, "8EiB"),
        ];
        for (bytes, text) in cases {
            assert_eq!(format_size(*bytes), *text);
            assert_eq!(parse_size(text), Ok(*bytes));
        }
    }

    #[test]
    fn durations_parse() {
        let cases: &[(&str, Duration)] = &[
            ("500ms", Duration::from_millis(500)),
            ("5s", Duration::from_secs(5)),
            ("5 s", Duration::from_secs(5)),
            ("2m", Duration::from_secs(120)),
            ("1h", Duration::from_secs(3600)),
            ("250us", Duration::from_micros(250)),
            ("7ns", Duration::from_nanos(7)),
            ("0s", Duration::ZERO),
        ];
        for (text, duration) in cases {
            assert_eq!(parse_duration(text), Ok(*duration), "{text}");
        }
    }

    #[test]
    fn bad_durations_are_refused_with_a_reason() {
        let cases: &[(&str, &str)] = &[
            ("500", "has no unit"),
            ("5 sec", "unknown unit \"sec\""),
            ("1.5s", "fractions are not allowed"),
            ("-1s", "cannot be negative"),
            ("soon", "is not a duration"),
            ("2d", "unknown unit \"d\""),
            ("5S", "unknown unit \"S\""),
            ("18446744073709551615h", "too long"),
        ];
        for (text, message) in cases {
            let err = parse_duration(text).unwrap_err();
            assert!(err.contains(message), "{text}: {err}");
        }
    }

    #[test]
    fn durations_format_exactly_and_round_trip() {
        let cases: &[(Duration, &str)] = &[
            (Duration::from_secs(10), "10s"),
            (Duration::from_secs(120), "2m"),
            (Duration::from_secs(7200), "2h"),
            (Duration::from_secs(90), "90s"),
            (Duration::from_millis(1500), "1500ms"),
            (Duration::from_nanos(1_000_001), "1000001ns"),
            (Duration::from_micros(3), "3us"),
            (Duration::new(u64::MAX, 0), "18446744073709551615s"),
        ];
        for (duration, text) in cases {
            assert_eq!(format_duration(*duration), *text);
            assert_eq!(parse_duration(text), Ok(*duration));
        }
    }
}
