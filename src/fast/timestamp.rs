//! RFC 3339 timestamps written without the formatting machinery: every check answer carries
//! two. Held to humantime's `format_rfc3339_seconds` by a property test.

use std::time::SystemTime;

/// RFC 3339 in UTC, to the second: `2026-11-22T01:38:02Z`; what humantime's
/// `format_rfc3339_seconds` writes.
pub fn rfc3339(at: SystemTime) -> String {
    let mut out = Vec::with_capacity(20);
    write_rfc3339(&mut out, at);
    // Only ASCII digits and separators were written.
    String::from_utf8(out).unwrap_or_default()
}

/// Appends [`rfc3339`]'s form of `at` to `out`, without the formatting machinery (every check
/// answer carries two). The civil date comes from the days since the epoch by Howard Hinnant's
/// `civil_from_days`. Times outside the years 1970 to 9999, which robotsd never produces, are
/// written as the nearest end of that range rather than as something RFC 3339 cannot say.
pub fn write_rfc3339(out: &mut Vec<u8>, at: SystemTime) {
    write_seconds(out, at);
    out.push(b'Z');
}

/// Appends `at` in RFC 3339 to the millisecond, `2026-11-25T06:00:01.500Z`: what humantime's
/// `format_rfc3339_millis` writes (a pace answer's times, which are closer than a second).
pub fn write_rfc3339_millis(out: &mut Vec<u8>, at: SystemTime) {
    write_seconds(out, at);
    let millis = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()
        .filter(|since| since.as_secs() <= LAST_SECOND_OF_9999)
        .map_or(0, |since| since.subsec_millis());
    // Under 1,000: three digits.
    out.extend_from_slice(&[
        b'.',
        b'0' + (millis / 100) as u8,
        b'0' + (millis / 10 % 10) as u8,
        b'0' + (millis % 10) as u8,
        b'Z',
    ]);
}

/// The last second RFC 3339 can write.
const LAST_SECOND_OF_9999: u64 = 253_402_300_799;

/// `at` to the second, without the `Z`.
fn write_seconds(out: &mut Vec<u8>, at: SystemTime) {
    let secs = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs().min(LAST_SECOND_OF_9999));
    let (days, of_day) = (secs / 86_400, secs % 86_400);
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    // Every value below is under 100.
    let two = |n: u64| [b'0' + (n / 10) as u8, b'0' + (n % 10) as u8];
    let [y1, y2] = two(year / 100);
    let [y3, y4] = two(year % 100);
    let [mo1, mo2] = two(month);
    let [d1, d2] = two(day);
    let [h1, h2] = two(of_day / 3600);
    let [mi1, mi2] = two(of_day / 60 % 60);
    let [s1, s2] = two(of_day % 60);
    out.extend_from_slice(&[
        y1, y2, y3, y4, b'-', mo1, mo2, b'-', d1, d2, b'T', h1, h2, b':', mi1, mi2, b':', s1, s2,
    ]);
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use proptest::prelude::*;

    use super::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn rfc3339_at_the_edges() {
        for (secs, expected) in [
            (0, "1970-01-01T00:00:00Z"),
            (86_399, "1970-01-01T23:59:59Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (4_107_542_400, "2100-03-01T00:00:00Z"),
            (253_402_300_799, "9999-12-31T23:59:59Z"),
            // Out of range: the nearest end.
            (253_402_300_800, "9999-12-31T23:59:59Z"),
        ] {
            assert_eq!(rfc3339(at(secs)), expected, "{secs}");
        }
        assert_eq!(
            rfc3339(UNIX_EPOCH - Duration::from_secs(1)),
            "1970-01-01T00:00:00Z"
        );
        let millis = |at: SystemTime| {
            let mut out = Vec::new();
            write_rfc3339_millis(&mut out, at);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(millis(at(0)), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            millis(at(1) + Duration::from_micros(7_999)),
            "1970-01-01T00:00:01.007Z"
        );
        assert_eq!(millis(at(253_402_300_800)), "9999-12-31T23:59:59.000Z");
    }

    proptest! {
        #[test]
        fn rfc3339_is_humantimes(secs in 0u64..253_402_300_800, nanos in 0u32..1_000_000_000) {
            let when = at(secs) + Duration::from_nanos(u64::from(nanos));
            prop_assert_eq!(rfc3339(when), humantime::format_rfc3339_seconds(when).to_string());
        }

        #[test]
        fn rfc3339_millis_is_humantimes(secs in 0u64..253_402_300_800, nanos in 0u32..1_000_000_000) {
            let when = at(secs) + Duration::from_nanos(u64::from(nanos));
            let mut out = Vec::new();
            write_rfc3339_millis(&mut out, when);
            prop_assert_eq!(
                String::from_utf8(out).unwrap(),
                humantime::format_rfc3339_millis(when).to_string()
            );
        }
    }
}
