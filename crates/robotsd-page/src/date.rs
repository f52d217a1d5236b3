//! The dates of `unavailable_after`: "a widely adopted format including, but not limited to
//! RFC 822, RFC 850, and ISO 8601" (Google). Read here, all as Google's and MDN's examples write
//! them:
//!
//! - RFC 822 / RFC 1123 / RFC 2822 and HTTP's IMF-fixdate: `[Wed, ]03 Dec 2025 13:09:53 GMT`,
//!   `25 Jun 2010 15:00:00 PST` (seconds optional, two-digit years as RFC 2822 reads them);
//! - RFC 850: `Friday, 25-Jun-10 15:00:00 PST`;
//! - ANSI C's `asctime()`: `Wed Dec  3 13:09:53 2025` (as HTTP dates may be);
//! - ISO 8601 / RFC 3339: `2020-09-21`, `2020-09-21T15:00`, `2020-09-21T15:00:00.5+02:00`,
//!   with `T` or a space.
//!
//! A date without a zone is taken as UTC (the formats' own default for HTTP dates; Google says
//! nothing). Zones: `UT`, `UTC`, `GMT`, `Z`, North America's `EST`…`PDT` (RFC 822), and
//! numeric offsets. Anything else is no date: the rule is ignored, as Google ignores it.

use time::{Date, Month, PrimitiveDateTime, Time, UtcOffset};

const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// Whether `word` is a weekday's name or its three-letter abbreviation, in any case.
pub(crate) fn is_weekday(word: &str) -> bool {
    word.len() >= 3
        && WEEKDAYS
            .iter()
            .any(|day| word.eq_ignore_ascii_case(day) || word.eq_ignore_ascii_case(&day[..3]))
}

/// `text` as seconds since the Unix epoch, if it is a date of one of the formats above.
pub fn parse(text: &str) -> Option<i64> {
    let text = text.trim();
    iso8601(text)
        .or_else(|| rfc822(text))
        .or_else(|| asctime(text))
        .map(|at| at.unix_timestamp())
}

type Instant = time::OffsetDateTime;

fn number<T: std::str::FromStr>(
    digits: &str,
    lengths: std::ops::RangeInclusive<usize>,
) -> Option<T> {
    (lengths.contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

fn month(name: &str) -> Option<Month> {
    let index = MONTHS.iter().position(|m| {
        name.eq_ignore_ascii_case(m)
            || (name.len() > 3
                && name.len() <= 9
                && name[..3].eq_ignore_ascii_case(m)
                && full_month(name))
    })?;
    Month::try_from(index as u8 + 1).ok()
}

fn full_month(name: &str) -> bool {
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ]
    .iter()
    .any(|m| name.eq_ignore_ascii_case(m))
}

fn at(date: Date, time: Time, offset: UtcOffset) -> Instant {
    PrimitiveDateTime::new(date, time).assume_offset(offset)
}

/// `hh:mm[:ss[.fraction]]` (the fraction is dropped: the rule is to the second).
fn clock(text: &str) -> Option<Time> {
    let mut parts = text.splitn(3, ':');
    let hour = number(parts.next()?, 1..=2)?;
    let minute = number(parts.next()?, 2..=2)?;
    let second = match parts.next() {
        Some(seconds) => {
            let whole = seconds
                .split_once(['.', ','])
                .map_or(seconds, |(whole, fraction)| {
                    if fraction.is_empty() || !fraction.bytes().all(|b| b.is_ascii_digit()) {
                        "x"
                    } else {
                        whole
                    }
                });
            number(whole, 2..=2)?
        }
        None => 0,
    };
    Time::from_hms(hour, minute, second).ok()
}

/// A zone: a name RFC 822 defines, `UTC`, or `±hhmm` / `±hh:mm` / `±hh`.
fn zone(text: &str) -> Option<UtcOffset> {
    let named = [
        ("UT", 0),
        ("UTC", 0),
        ("GMT", 0),
        ("Z", 0),
        ("EST", -5),
        ("EDT", -4),
        ("CST", -6),
        ("CDT", -5),
        ("MST", -7),
        ("MDT", -6),
        ("PST", -8),
        ("PDT", -7),
    ];
    if let Some((_, hours)) = named.iter().find(|(n, _)| text.eq_ignore_ascii_case(n)) {
        return UtcOffset::from_hms(*hours, 0, 0).ok();
    }
    let (sign, digits) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let digits = digits.replacen(':', "", 1);
    let (hours, minutes): (i8, i8) = match digits.len() {
        2 => (number(&digits, 2..=2)?, 0),
        4 => (number(&digits[..2], 2..=2)?, number(&digits[2..], 2..=2)?),
        _ => return None,
    };
    // Offsets in use lie within ±14 h; `time` would take up to ±25:59.
    if hours > 23 || minutes > 59 {
        return None;
    }
    UtcOffset::from_hms(sign * hours, sign * minutes, 0).ok()
}

/// RFC 2822's reading of a two-digit year (§4.3): 00–49 are 2000–2049, 50–99 are 1950–1999.
fn year(text: &str) -> Option<i32> {
    match text.len() {
        2 => number::<i32>(text, 2..=2).map(|y| if y < 50 { 2000 + y } else { 1900 + y }),
        4 => number(text, 4..=4),
        _ => None,
    }
}

/// RFC 822 / 1123 / 2822 and RFC 850.
fn rfc822(text: &str) -> Option<Instant> {
    let mut rest = text;
    // An optional weekday, with its comma (RFC 850 spells it out).
    if let Some((first, after)) = rest.split_once([',', ' '])
        && is_weekday(first)
    {
        rest = after.trim_start_matches([',', ' ']);
    }
    let mut words = rest.split_ascii_whitespace();
    let first = words.next()?;
    let (day, month_name, year_text) = match first.split('-').collect::<Vec<_>>()[..] {
        // RFC 850: `25-Jun-10`.
        [day, month_name, year_text] => (day, month_name, year_text),
        [day] => (day, words.next()?, words.next()?),
        _ => return None,
    };
    let date =
        Date::from_calendar_date(year(year_text)?, month(month_name)?, number(day, 1..=2)?).ok()?;
    let time = clock(words.next()?)?;
    let offset = match words.next() {
        Some(name) => zone(name)?,
        None => UtcOffset::UTC,
    };
    words.next().is_none().then(|| at(date, time, offset))
}

/// `asctime()`: `Wed Dec  3 13:09:53 2025`.
fn asctime(text: &str) -> Option<Instant> {
    let words: Vec<&str> = text.split_ascii_whitespace().collect();
    let [weekday, month_name, day, clock_text, year_text] = words[..] else {
        return None;
    };
    if !is_weekday(weekday) {
        return None;
    }
    let date = Date::from_calendar_date(
        number(year_text, 4..=4)?,
        month(month_name)?,
        number(day, 1..=2)?,
    )
    .ok()?;
    Some(at(date, clock(clock_text)?, UtcOffset::UTC))
}

/// ISO 8601's calendar date, with an optional time and zone.
fn iso8601(text: &str) -> Option<Instant> {
    let (date_text, rest) = match text.find(['T', 't', ' ']) {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    let mut parts = date_text.split('-');
    let date = Date::from_calendar_date(
        number(parts.next()?, 4..=4)?,
        Month::try_from(number::<u8>(parts.next()?, 2..=2)?).ok()?,
        number(parts.next()?, 2..=2)?,
    )
    .ok()?;
    if parts.next().is_some() {
        return None;
    }
    let Some(rest) = rest else {
        return Some(at(date, Time::MIDNIGHT, UtcOffset::UTC));
    };
    let rest = rest.trim();
    // The zone starts at a `Z`, or at a sign after the clock's first digits.
    let split = rest
        .char_indices()
        .skip(1)
        .find(|&(_, c)| matches!(c, 'Z' | 'z' | '+' | '-'))
        .map_or(rest.len(), |(i, _)| i);
    let (clock_text, zone_text) = rest.split_at(split);
    let offset = match zone_text.trim() {
        "" => UtcOffset::UTC,
        zone_text => zone(zone_text)?,
    };
    Some(at(date, clock(clock_text.trim())?, offset))
}

/// `seconds` since the Unix epoch as RFC 3339 in UTC (`2010-06-25T23:00:00Z`); an instant
/// `time` cannot represent (beyond year 9999) is written at the nearest one it can.
pub fn format_rfc3339(seconds: i64) -> String {
    let at = Instant::from_unix_timestamp(seconds).unwrap_or(if seconds < 0 {
        time::PrimitiveDateTime::MIN.assume_utc()
    } else {
        time::PrimitiveDateTime::MAX.assume_utc()
    });
    at.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn googles_and_mdns_examples() {
        // Google's header example, RFC 822 without a weekday.
        assert_eq!(parse("25 Jun 2010 15:00:00 PST"), Some(1_277_506_800));
        // Google's meta example, an ISO 8601 date.
        assert_eq!(parse("2020-09-21"), Some(1_600_646_400));
        // MDN's, an IMF-fixdate.
        assert_eq!(parse("Wed, 03 Dec 2025 13:09:53 GMT"), Some(1_764_767_393));
    }

    #[test]
    fn each_format_gives_the_same_instant() {
        let expected = Some(1_277_506_800);
        for text in [
            "Fri, 25 Jun 2010 15:00:00 PST",
            "Friday, 25-Jun-10 15:00:00 PST",
            "25 June 2010 23:00 GMT",
            "25 Jun 10 23:00:00 +0000",
            "Fri Jun 25 23:00:00 2010",
            "2010-06-25T23:00:00Z",
            "2010-06-25T15:00:00-08:00",
            "2010-06-25 23:00:00.250+00:00",
            "2010-06-25t23:00z",
            "2010-06-26T01:00:00+0200",
            "fri, 25 jun 2010 15:00:00 pst",
        ] {
            assert_eq!(parse(text), expected, "{text}");
        }
    }

    #[test]
    fn a_date_without_a_zone_is_utc() {
        assert_eq!(parse("25 Jun 2010 23:00:00"), Some(1_277_506_800));
        assert_eq!(parse("2010-06-25T23:00:00"), Some(1_277_506_800));
    }

    #[test]
    fn what_is_not_a_date() {
        for text in [
            "",
            "soon",
            "2020-13-01",
            "2020-02-30",
            "2020-9-21",
            "25 Jun 2010 25:00:00 GMT",
            "25 Jun 2010 15:00:00 XYZ",
            "25 Jun 2010 15:00:00 GMT extra",
            "Fri, 25 Foo 2010 15:00:00 GMT",
            "2020-09-21T10:00:00+25:00",
            "20200921",
        ] {
            assert_eq!(parse(text), None, "{text}");
        }
    }

    #[test]
    fn instants_are_written_as_rfc3339() {
        assert_eq!(format_rfc3339(1_277_506_800), "2010-06-25T23:00:00Z");
        assert_eq!(format_rfc3339(-86_400), "1969-12-31T00:00:00Z");
    }

    #[test]
    fn weekdays() {
        for word in ["Wed", "wednesday", "FRI"] {
            assert!(is_weekday(word), "{word}");
        }
        for word in ["We", "Wedn", "25"] {
            assert!(!is_weekday(word), "{word}");
        }
    }
}
