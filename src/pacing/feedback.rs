//! What a worker reports of a page fetch, and what it means for the origin's pace: a 429 or a
//! 5xx, no answer in time, or a connection refused or reset, is the site pushing back; anything
//! else is a success. A
//! `Retry-After` (RFC 9110 §10.2.3: seconds or an HTTP date) on a 429 or 503 holds the fleet back
//! that long, within `--max-retry-after`.

use std::time::Duration;

use crate::clock::Timestamp;
use crate::pace_policy::{Signal, millis};

/// One page fetch as a worker saw it: a status, or a timeout; and how long the site took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    outcome: Outcome,
    response_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Status {
        code: u16,
        retry_after: Option<String>,
    },
    Timeout,
    Connection(ConnectionFailure),
}

/// How a connection to the site failed before any answer, as a worker reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ConnectionFailure {
    /// The site refused the connection (nothing listens, or it sheds load).
    Refused,
    /// The site reset the connection.
    Reset,
}

/// A report that says nothing usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportError {
    /// Neither a status, a timeout nor a connection failure.
    #[error("a report needs a status, timeout: true or a connection failure")]
    Empty,
    /// More than one of them.
    #[error("a report has one of a status, timeout: true or a connection failure, not several")]
    Both,
    /// Not an HTTP status code.
    #[error("status {0} is not an HTTP status code (100 to 599)")]
    Status(u16),
}

/// The longest `Retry-After` value read; a longer one is no date or number robotsd could use,
/// and the report counts as a pushback without it.
const MAX_RETRY_AFTER_BYTES: usize = 256;

/// How a report was read, for metrics: a closed set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignalKind {
    /// A normal answer.
    Success,
    /// A 429 or 5xx without a usable `Retry-After`.
    Pushback,
    /// A 429 or 503 with a `Retry-After`.
    RetryAfter,
    /// No answer in time.
    Timeout,
    /// The connection was refused.
    Refused,
    /// The connection was reset.
    Reset,
    /// An answer much slower than the site's baseline ([`super::latency`]).
    Slow,
}

impl SignalKind {
    /// Every kind, in label order.
    pub const ALL: [SignalKind; 7] = [
        SignalKind::Success,
        SignalKind::Pushback,
        SignalKind::RetryAfter,
        SignalKind::Timeout,
        SignalKind::Refused,
        SignalKind::Reset,
        SignalKind::Slow,
    ];

    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            SignalKind::Success => "success",
            SignalKind::Pushback => "pushback",
            SignalKind::RetryAfter => "retry_after",
            SignalKind::Timeout => "timeout",
            SignalKind::Refused => "refused",
            SignalKind::Reset => "reset",
            SignalKind::Slow => "slow",
        }
    }
}

impl Report {
    /// A report of a status (with the `Retry-After` header's value as received, if any), or of
    /// a timeout.
    pub fn new(
        status: Option<u16>,
        retry_after: Option<String>,
        timeout: bool,
    ) -> Result<Report, ReportError> {
        Report::with_connection(status, retry_after, timeout, None)
    }

    /// [`Report::new`], or a connection refused or reset before any answer.
    pub fn with_connection(
        status: Option<u16>,
        retry_after: Option<String>,
        timeout: bool,
        connection: Option<ConnectionFailure>,
    ) -> Result<Report, ReportError> {
        let outcome = match (status, timeout, connection) {
            (None, false, None) => return Err(ReportError::Empty),
            (Some(_), true, _) | (Some(_), _, Some(_)) | (_, true, Some(_)) => {
                return Err(ReportError::Both);
            }
            (None, true, None) => Outcome::Timeout,
            (None, false, Some(failure)) => Outcome::Connection(failure),
            (Some(code), false, None) if !(100..=599).contains(&code) => {
                return Err(ReportError::Status(code));
            }
            (Some(code), false, None) => Outcome::Status {
                code,
                retry_after: retry_after.filter(|value| value.len() <= MAX_RETRY_AFTER_BYTES),
            },
        };
        Ok(Report {
            outcome,
            response_ms: None,
        })
    }

    /// The same report, with the time the site took to answer, as the worker measured it.
    pub fn with_response_time(mut self, response_ms: Option<u64>) -> Report {
        self.response_ms = response_ms;
        self
    }

    /// The time the site took to answer, when the worker said.
    pub fn response_ms(&self) -> Option<u64> {
        self.response_ms
    }

    /// What the report means at `now`, with a `Retry-After` capped at `max_retry_after`.
    pub fn signal(&self, now: Timestamp, max_retry_after: Duration) -> (Signal, SignalKind) {
        let pushback = |retry_after_ms| Signal::Pushback { retry_after_ms };
        match &self.outcome {
            Outcome::Timeout => (pushback(None), SignalKind::Timeout),
            Outcome::Connection(ConnectionFailure::Refused) => {
                (pushback(None), SignalKind::Refused)
            }
            Outcome::Connection(ConnectionFailure::Reset) => (pushback(None), SignalKind::Reset),
            Outcome::Status { code, retry_after } => match code {
                429 | 503 => match retry_after.as_deref().and_then(|v| retry_after_of(v, now)) {
                    Some(after) => (
                        pushback(Some(millis(after.min(max_retry_after)))),
                        SignalKind::RetryAfter,
                    ),
                    None => (pushback(None), SignalKind::Pushback),
                },
                500..=599 => (pushback(None), SignalKind::Pushback),
                _ => (Signal::Success, SignalKind::Success),
            },
        }
    }
}

/// A `Retry-After` value as a wait from `now`: delay-seconds or an HTTP date (a date in the
/// past is no wait); `None` when it is neither.
fn retry_after_of(value: &str, now: Timestamp) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // More digits than a u64 holds is a very long wait: the cap applies.
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(Timestamp::from_system(at).saturating_duration_since(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: Duration = Duration::from_secs(600);

    fn now() -> Timestamp {
        Timestamp::from_unix(Duration::from_secs(1_795_000_000))
    }

    fn read(status: u16, retry_after: Option<&str>) -> (Signal, SignalKind) {
        Report::new(Some(status), retry_after.map(str::to_string), false)
            .unwrap()
            .signal(now(), MAX)
    }

    #[test]
    fn statuses_read_as_success_or_pushback() {
        for status in [200, 204, 301, 304, 404, 410] {
            assert_eq!(read(status, None), (Signal::Success, SignalKind::Success));
        }
        for status in [429, 500, 502, 503, 504] {
            assert_eq!(
                read(status, None),
                (
                    Signal::Pushback {
                        retry_after_ms: None
                    },
                    SignalKind::Pushback
                ),
                "{status}"
            );
        }
        let timeout = Report::new(None, None, true).unwrap().signal(now(), MAX);
        for (failure, kind) in [
            (ConnectionFailure::Refused, SignalKind::Refused),
            (ConnectionFailure::Reset, SignalKind::Reset),
        ] {
            let report = Report::with_connection(None, None, false, Some(failure)).unwrap();
            assert_eq!(
                report.signal(now(), MAX),
                (
                    Signal::Pushback {
                        retry_after_ms: None
                    },
                    kind
                )
            );
            assert_eq!(
                Report::with_connection(None, None, true, Some(failure)),
                Err(ReportError::Both)
            );
            assert_eq!(
                Report::with_connection(Some(200), None, false, Some(failure)),
                Err(ReportError::Both)
            );
        }
        assert_eq!(timeout.1, SignalKind::Timeout);
    }

    #[test]
    fn retry_after_in_seconds_or_as_a_date_is_honoured_within_the_cap() {
        let held = |ms| Signal::Pushback {
            retry_after_ms: Some(ms),
        };
        assert_eq!(read(429, Some("3")), (held(3000), SignalKind::RetryAfter));
        assert_eq!(read(503, Some(" 120 ")).0, held(120_000));
        assert_eq!(read(429, Some("86400")).0, held(600_000));
        assert_eq!(read(429, Some("99999999999999999999999")).0, held(600_000));
        let date = httpdate::fmt_http_date((now() + Duration::from_secs(30)).to_system());
        assert_eq!(read(503, Some(&date)).0, held(30_000));
        let past = httpdate::fmt_http_date((now() - Duration::from_secs(30)).to_system());
        assert_eq!(read(503, Some(&past)).0, held(0));
        // Unreadable, or on a status that does not carry it: a plain pushback.
        assert_eq!(read(429, Some("soon")).1, SignalKind::Pushback);
        assert_eq!(read(500, Some("3")).1, SignalKind::Pushback);
    }

    #[test]
    fn reports_that_say_nothing_usable_are_refused() {
        assert_eq!(Report::new(None, None, false), Err(ReportError::Empty));
        assert_eq!(Report::new(Some(200), None, true), Err(ReportError::Both));
        assert_eq!(
            Report::new(Some(99), None, false),
            Err(ReportError::Status(99))
        );
        assert_eq!(
            Report::new(Some(600), None, false),
            Err(ReportError::Status(600))
        );
    }

    #[test]
    fn an_overlong_retry_after_is_read_as_none() {
        let report = Report::new(Some(429), Some("9".repeat(300)), false).unwrap();
        assert_eq!(report.signal(now(), MAX).1, SignalKind::Pushback);
    }
}
