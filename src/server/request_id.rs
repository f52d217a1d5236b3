//! The request id every response carries (`X-Request-Id`) and its access-log line shows, so that
//! a caller's complaint about one answer finds that answer's log line.
//!
//! The id is the caller's own when it sends one: its `X-Request-Id` (printable ASCII, at most
//! [`MAX_ID_BYTES`]), else the trace id of a W3C `traceparent`, so that a traced crawler's
//! trace and robotsd's log meet. Otherwise robotsd makes one: 32 hex digits, a random
//! per-process prefix and a counter, unique without a random draw per request.

use std::cell::RefCell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use bytes::Bytes;

/// The header that carries the id, both ways.
pub static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// W3C Trace Context's header, named once: a name given as text is parsed at each lookup.
static TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");

/// The longest id taken from a caller: longer ones are replaced, not cut, so that a log never
/// holds a stranger's kilobytes.
pub const MAX_ID_BYTES: usize = 128;

/// The id of the request with `headers`.
pub fn request_id(headers: &HeaderMap) -> HeaderValue {
    // One pass over the few headers a request has, rather than a hashed lookup of each name.
    let (mut given, mut traced) = (None, None);
    for (name, value) in headers {
        if given.is_none() && name == X_REQUEST_ID {
            given = Some(value);
        } else if traced.is_none() && name == TRACEPARENT {
            traced = Some(value);
        }
    }
    if let Some(given) = given.filter(|given| usable(given.as_bytes())) {
        return given.clone();
    }
    if let Some(trace) = traced.and_then(|value| trace_id(value.as_bytes())) {
        return HeaderValue::from_bytes(trace).expect("hex digits");
    }
    made()
}

/// Printable ASCII without spaces, 1 to [`MAX_ID_BYTES`] bytes.
fn usable(id: &[u8]) -> bool {
    !id.is_empty() && id.len() <= MAX_ID_BYTES && id.iter().all(u8::is_ascii_graphic)
}

/// The trace id of a W3C `traceparent` (`version-traceid-parentid-flags`): 32 lower-case hex
/// digits, not all zero (an invalid id, by the recommendation).
fn trace_id(traceparent: &[u8]) -> Option<&[u8]> {
    let mut parts = traceparent.split(|&b| b == b'-');
    let version = parts.next()?;
    let trace = parts.next()?;
    let parent = parts.next()?;
    let hex = |part: &[u8], len: usize| {
        part.len() == len && part.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    (hex(version, 2)
        && version != b"ff"
        && hex(trace, 32)
        && trace.iter().any(|&b| b != b'0')
        && hex(parent, 16))
    .then_some(trace)
}

/// Ids a thread makes at once: one allocation for them all, each handed out as a slice of it.
const MADE_AT_ONCE: usize = 64;

/// The length of a made id: 16 hex digits of prefix, 16 of counter.
const MADE_LEN: usize = 32;

/// A new id: this process's random prefix, then a counter. Each thread takes
/// [`MADE_AT_ONCE`] counts at a time and writes their ids into one buffer, so that an id costs
/// a slice of it (a reference count) rather than an allocation and a copy of its own, with a
/// free when the response is gone. Ids stay unique; across threads they are not in the order
/// the requests came.
fn made() -> HeaderValue {
    thread_local! {
        static MADE: RefCell<(Bytes, usize)> = const { RefCell::new((Bytes::new(), 0)) };
    }
    MADE.with(|made| {
        let mut made = made.borrow_mut();
        let (ids, next) = &mut *made;
        if *next == ids.len() {
            *ids = made_ids();
            *next = 0;
        }
        let id = ids.slice(*next..*next + MADE_LEN);
        *next += MADE_LEN;
        HeaderValue::from_maybe_shared(id).expect("hex digits")
    })
}

/// The next [`MADE_AT_ONCE`] ids, one after the other.
fn made_ids() -> Bytes {
    static PREFIX: OnceLock<[u8; 16]> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let prefix = PREFIX.get_or_init(|| hex_digits(rand::random::<u64>()));
    let first = COUNTER.fetch_add(MADE_AT_ONCE as u64, Ordering::Relaxed);
    let mut text = Vec::with_capacity(MADE_AT_ONCE * MADE_LEN);
    for count in first..first + MADE_AT_ONCE as u64 {
        text.extend_from_slice(prefix);
        text.extend_from_slice(&hex_digits(count));
    }
    Bytes::from(text)
}

/// `word` as 16 lower-case hex digits. Each half's eight nibbles are spread into the eight
/// bytes of a word and turned into digits all at once: a table lookup per digit was about 80
/// instructions of every request without an id of its own.
fn hex_digits(word: u64) -> [u8; 16] {
    const ONES: u64 = u64::from_be_bytes([1; 8]);
    let digits = |half: u64| {
        // 0x12345678 becomes 0x0102030405060708: the first digit in the highest byte.
        let mut x = half;
        x = (x | x << 16) & 0x0000_FFFF_0000_FFFF;
        x = (x | x << 8) & 0x00FF_00FF_00FF_00FF;
        x = (x | x << 4) & (ONES * 0x0F);
        // A nibble of 10 or more carries into its byte's bit 4 when 6 is added: it takes a
        // letter, `a` lying 0x27 past where `0` + 10 would.
        let letters = ((x + ONES * 6) >> 4) & ONES;
        (x + ONES * u64::from(b'0') + letters * 0x27).to_be_bytes()
    };
    let mut text = [0u8; 16];
    text[..8].copy_from_slice(&digits(word >> 32));
    text[8..].copy_from_slice(&digits(word & 0xFFFF_FFFF));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(name, value)| {
                (
                    HeaderName::from_static(name),
                    HeaderValue::from_str(value).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn the_caller_s_own_id_is_kept() {
        let id = request_id(&headers(&[("x-request-id", "crawl-42/page-7")]));
        assert_eq!(id, "crawl-42/page-7");
    }

    #[test]
    fn a_trace_s_id_is_taken_from_traceparent() {
        let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let id = request_id(&headers(&[("traceparent", traceparent)]));
        assert_eq!(id, "4bf92f3577b34da6a3ce929d0e0e4736");
        // X-Request-Id wins over a trace.
        let id = request_id(&headers(&[
            ("traceparent", traceparent),
            ("x-request-id", "mine"),
        ]));
        assert_eq!(id, "mine");
    }

    #[test]
    fn unusable_ids_are_replaced_by_a_new_one() {
        let long = "x".repeat(MAX_ID_BYTES + 1);
        for given in [
            headers(&[("x-request-id", "has space")]),
            headers(&[("x-request-id", &long)]),
            headers(&[(
                "traceparent",
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            )]),
            headers(&[(
                "traceparent",
                "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            )]),
            headers(&[(
                "traceparent",
                "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            )]),
            headers(&[("traceparent", "00-4bf92f35")]),
            HeaderMap::new(),
        ] {
            let id = request_id(&given);
            assert_eq!(id.len(), 32, "{id:?}");
            assert!(id.as_bytes().iter().all(u8::is_ascii_hexdigit), "{id:?}");
        }
    }

    #[test]
    fn the_first_of_repeated_headers_counts() {
        let mut repeated = headers(&[("x-request-id", "first"), ("traceparent", "00-4bf9")]);
        repeated.append("x-request-id", HeaderValue::from_static("second"));
        assert_eq!(request_id(&repeated), "first");
        let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let mut traced = headers(&[("traceparent", traceparent)]);
        traced.append("traceparent", HeaderValue::from_static("00-0-0-01"));
        assert_eq!(request_id(&traced), "4bf92f3577b34da6a3ce929d0e0e4736");
    }

    #[test]
    fn hex_digits_are_the_word_s() {
        assert_eq!(&hex_digits(0x0123_4567_89ab_cdef), b"0123456789abcdef");
        assert_eq!(&hex_digits(0xfedc_ba98_7654_3210), b"fedcba9876543210");
        assert_eq!(&hex_digits(0), b"0000000000000000");
        assert_eq!(&hex_digits(u64::MAX), b"ffffffffffffffff");
        // Every digit value at every position, with the other digits at both ends of the range.
        for at in 0..16 {
            for digit in 0..16u64 {
                for fill in [0u64, u64::MAX] {
                    let shift = 60 - 4 * at;
                    let word = (fill & !(0xF << shift)) | digit << shift;
                    assert_eq!(hex_digits(word), *format!("{word:016x}").as_bytes());
                }
            }
        }
    }

    #[test]
    fn made_ids_differ() {
        let (a, b) = (made(), made());
        assert_ne!(a, b);
        assert_eq!(
            a.as_bytes()[..16],
            b.as_bytes()[..16],
            "one process, one prefix"
        );
    }

    #[test]
    fn made_ids_are_unique_across_blocks_and_threads() {
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    (0..3 * MADE_AT_ONCE + 5)
                        .map(|_| made())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all = std::collections::HashSet::new();
        for thread in threads {
            for id in thread.join().unwrap() {
                assert_eq!(id.len(), MADE_LEN, "{id:?}");
                assert!(id.as_bytes().iter().all(u8::is_ascii_hexdigit), "{id:?}");
                assert!(all.insert(id.as_bytes().to_vec()), "{id:?} twice");
            }
        }
        assert_eq!(all.len(), 4 * (3 * MADE_AT_ONCE + 5));
    }
}
