//! The value formats of the settings, as clap value parsers: durations, sizes and CIDRs.
//!
//! One parser per kind of value, so that every duration flag accepts the same spellings and
//! every size flag the same units, and so that a mistyped value is refused by clap with the
//! flag's name before any setting is checked against another:
//! - durations use humantime's syntax ([`parse_duration`]): `500ms`, `5s`, `1m`, `24h`,
//!   `30days`, `1h 30m`; at most 100 years;
//! - sizes are bytes ([`parse_size`]): a plain integer (`512000`, `512_000`) or an integer with a
//!   unit, decimal (`kB`, `MB`, `GB`, `TB`: powers of 1000) or binary (`KiB`, `MiB`, `GiB`, `TiB`:
//!   powers of 1024); units are case-insensitive, fractions are not accepted;
//! - CIDRs ([`parse_cidr`]): `10.0.0.0/8`, `fd00::/8`, or a bare address meaning that one host;
//!   the environment variables of the repeatable `--allow-cidr` and `--deny-cidr` take a
//!   comma-separated list.

use std::time::Duration;

use ipnet::IpNet;

/// The longest duration any setting accepts (100 years of 365 days); longer values would only
/// risk overflowing clock arithmetic.
pub const MAX_DURATION: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

pub(super) const KIB: u64 = 1024;
pub(super) const MIB: u64 = 1024 * 1024;

/// Parses a duration in humantime's syntax (`5s`, `1m`, `24h`, `30days`, `1h 30m`, `0`), at most
/// [`MAX_DURATION`]. A number without a unit other than `0` is refused.
pub fn parse_duration(value: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(value.trim())
        .map_err(|e| format!("{e} (expected e.g. 500ms, 5s, 1m, 24h, 30days)"))?;
    if duration > MAX_DURATION {
        return Err("too long: at most 100 years".to_string());
    }
    Ok(duration)
}

/// Parses a size in bytes: an integer (`_` allowed between digits) optionally followed by a
/// unit, `B`, decimal `kB`/`MB`/`GB`/`TB` (also `K`, `M`, `G`, `T`: powers of 1000) or binary
/// `KiB`/`MiB`/`GiB`/`TiB` (powers of 1024), case-insensitive, with optional space before it:
/// `512000`, `500KiB`, `256 MiB`, `1MB`.
pub fn parse_size(value: &str) -> Result<u64, String> {
    let value = value.trim();
    let split = value
        .find(|c: char| !(c.is_ascii_digit() || c == '_'))
        .unwrap_or(value.len());
    let (digits, unit) = value.split_at(split);
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return Err(format!(
            "invalid size {value:?} (expected bytes, e.g. 512000, 500KiB, 256MiB)"
        ));
    }
    let number: u64 = digits
        .replace('_', "")
        .parse()
        .map_err(|_| format!("size {value:?} is too large"))?;
    let multiplier: u64 = match unit.trim_start().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1000,
        "m" | "mb" => 1000 * 1000,
        "g" | "gb" => 1000 * 1000 * 1000,
        "t" | "tb" => 1000 * 1000 * 1000 * 1000,
        "ki" | "kib" => KIB,
        "mi" | "mib" => MIB,
        "gi" | "gib" => 1024 * MIB,
        "ti" | "tib" => 1024 * 1024 * MIB,
        _ => {
            return Err(format!(
                "unknown size unit {:?} in {value:?} (use B, kB, MB, GB, TB, KiB, MiB, GiB or TiB)",
                unit.trim_start()
            ));
        }
    };
    number
        .checked_mul(multiplier)
        .ok_or_else(|| format!("size {value:?} is too large"))
}

/// Parses a CIDR (`10.0.0.0/8`, `2001:db8::/32`) or a bare address, meaning that one host
/// (`/32` or `/128`); surrounding whitespace is ignored.
pub fn parse_cidr(value: &str) -> Result<IpNet, String> {
    let value = value.trim();
    if let Ok(net) = value.parse::<IpNet>() {
        return Ok(net);
    }
    value
        .parse::<std::net::IpAddr>()
        .map(IpNet::from)
        .map_err(|_| format!("invalid CIDR {value:?} (expected e.g. 10.0.0.0/8 or fd00::/8)"))
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);
    const HOUR: Duration = Duration::from_secs(3600);

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("1m"), Ok(MINUTE));
        assert_eq!(parse_duration("24h"), Ok(24 * HOUR));
        assert_eq!(parse_duration("30days"), Ok(30 * 24 * HOUR));
        assert_eq!(parse_duration("1h 30m"), Ok(90 * MINUTE));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration(" 0 "), Ok(Duration::ZERO));
        assert_eq!(parse_duration("1.5h"), Ok(90 * MINUTE));
        assert_eq!(
            parse_duration("100years"),
            Err("too long: at most 100 years".into())
        );
        for bad in [
            "",
            "5",
            "five seconds",
            "-1s",
            "5 parsecs",
            "99999999999999999999s",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("512000"), Ok(512_000));
        assert_eq!(parse_size("512_000"), Ok(512_000));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("10B"), Ok(10));
        assert_eq!(parse_size("500KiB"), Ok(512_000));
        assert_eq!(parse_size("256MiB"), Ok(256 * MIB));
        assert_eq!(parse_size("256 mib"), Ok(256 * MIB));
        assert_eq!(parse_size("1GiB"), Ok(1024 * MIB));
        assert_eq!(parse_size("2TiB"), Ok(2 * 1024 * 1024 * MIB));
        assert_eq!(parse_size("1kB"), Ok(1000));
        assert_eq!(parse_size("1K"), Ok(1000));
        assert_eq!(parse_size("3MB"), Ok(3_000_000));
        assert_eq!(parse_size("2G"), Ok(2_000_000_000));
        assert_eq!(parse_size("1Mi"), Ok(MIB));
        for bad in [
            "",
            "MiB",
            "-1",
            "1_",
            "1.5MiB",
            "12parsecs",
            "1 MiB extra",
            "_1",
            "1__0",
            "0x10",
            "18446744073709551616",
            "16777216TiB",
        ] {
            assert!(parse_size(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn cidrs_parse() {
        assert_eq!(parse_cidr("10.0.0.0/8"), Ok("10.0.0.0/8".parse().unwrap()));
        assert_eq!(parse_cidr(" ::1/128 "), Ok("::1/128".parse().unwrap()));
        assert_eq!(parse_cidr("192.0.2.7"), Ok("192.0.2.7/32".parse().unwrap()));
        assert_eq!(parse_cidr("fd00::1"), Ok("fd00::1/128".parse().unwrap()));
        for bad in ["", "10.0.0.0/33", "example.com", "10.0.0/8", "::1/129"] {
            assert!(parse_cidr(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn bad_values_are_rejected_by_clap() {
        for args in [
            &["--connect-timeout", "5"][..],
            &["--fetch-timeout", "soon"],
            &["--cache-capacity", "lots"],
            &["--max-body-bytes", "1.5MiB"],
            &["--listen", "localhost"],
            &["--proxy", "not a url"],
            &["--max-batch=-1"],
        ] {
            let err = parse(args).unwrap_err();
            assert!(
                matches!(
                    err.kind(),
                    clap::error::ErrorKind::ValueValidation | clap::error::ErrorKind::InvalidValue
                ),
                "{args:?}: {err}"
            );
        }
    }
}
