//! What the shared store holds per origin, and how it is written: a [`Record`] of the last good
//! copy (with its body) and the backoff, in wall-clock milliseconds, which every replica reads
//! alike (robotsd's clock is wall-clock time that only moves forward: `crate::clock`).
//!
//! The encoding is a schema version, a JSON document of the metadata (small, readable with
//! `redis-cli`), and the body, deflate-compressed (robots.txt files are text and shrink about
//! five-fold). Decoding never trusts the bytes: an unknown version, broken JSON, a body that
//! does not inflate or inflates past the fetch limit, or numbers out of range are a
//! [`RecordError`], and the caller ignores the record (and later overwrites it). A record never
//! crashes a replica and never yields a verdict the bytes do not support.
//!
//! Another replica (or anyone with access to the store) may have written the record, so what
//! comes out is bounded as a fetch bounds it: a final URL over [`MAX_URL_BYTES`] makes the
//! record unusable, and reasons are cut to [`crate::kept::MAX_KEPT_TEXT_BYTES`] (as they are when written).

use std::io::Read as _;
use std::net::IpAddr;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::clock::Timestamp;
use crate::kept::kept_text;
use crate::origin::MAX_URL_BYTES;

/// The schema this build writes. A record of another version is skipped, not guessed at.
pub const SCHEMA_VERSION: u32 = 1;

/// The largest encoded metadata accepted (a record's JSON is a few hundred bytes).
pub const MAX_META_BYTES: usize = 64 * 1024;

/// Everything the fleet shares about one origin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The last successful fetch.
    pub copy: Option<StoredCopy>,
    /// The current run of failures.
    pub backoff: Option<StoredBackoff>,
}

/// What one fetch observed, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredFetch {
    /// The final HTTP status, if a response was received.
    pub status: Option<u16>,
    /// Decoded body bytes kept.
    pub bytes: usize,
    /// The body was cut at the size limit.
    pub truncated: bool,
    /// The URL the answer came from, after redirects.
    pub final_url: String,
    /// Redirects followed.
    pub redirects: u32,
    /// When the fetch started, in milliseconds since the Unix epoch.
    pub fetched_at_ms: u64,
    /// How long it took, in milliseconds.
    pub duration_ms: u64,
    /// The IP address the origin's server answered from, for lanes by address; absent from
    /// records written before it was kept (read as unknown, so the lane is by host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<IpAddr>,
    /// The response's `ETag`, to revalidate the copy with; absent when it sent none (and from
    /// records written before validators were kept: that copy is fetched whole).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// The response's `Last-Modified`, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
    /// The bot challenge the final response was, by vendor and marker; absent when it was none
    /// (and from records written before challenges were told apart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenge: Option<StoredChallenge>,
}

/// A bot challenge, as stored: read back only when it names one robotsd knows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredChallenge {
    /// Whose challenge.
    pub vendor: String,
    /// What showed it.
    pub marker: String,
}

/// The last good copy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredCopy {
    /// What the fetch observed.
    pub fetch: StoredFetch,
    /// Why there is no robots.txt (`status:404`, `redirect_limit`, …); `None` when the body was
    /// parsed.
    pub no_robots: Option<String>,
    /// When the copy was taken in, in milliseconds since the Unix epoch.
    pub kept_at_ms: u64,
    /// When the copy expires, in milliseconds since the Unix epoch.
    pub expires_at_ms: u64,
}

/// A run of failures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredBackoff {
    /// The first failure, in milliseconds since the Unix epoch.
    pub since_ms: u64,
    /// Failures in a row.
    pub failures: u32,
    /// No request before this, in milliseconds since the Unix epoch.
    pub next_retry_ms: u64,
    /// What the last failed fetch observed.
    pub last: StoredFetch,
    /// Why it failed.
    pub reason: String,
}

/// Why stored bytes are not a usable record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// Written by another schema version (an older or newer robotsd).
    #[error("schema version {found}, this build reads {SCHEMA_VERSION}")]
    Version {
        /// The version found.
        found: String,
    },
    /// A final URL longer than robotsd fetches ([`MAX_URL_BYTES`]).
    #[error("a final URL of {0} bytes, over {MAX_URL_BYTES}")]
    UrlTooLong(usize),
    /// The metadata is missing, too large or not the expected JSON.
    #[error("metadata: {0}")]
    Meta(String),
    /// The body does not inflate, or inflates past the limit.
    #[error("body: {0}")]
    Body(String),
    /// A parsed copy without its body, or with a body of another length.
    #[error("a parsed copy and its body do not match")]
    Inconsistent,
}

/// A record as the store keeps it: the fields of one hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoded {
    /// The schema version, as decimal text.
    pub version: String,
    /// The metadata, JSON.
    pub meta: Vec<u8>,
    /// The deflated body of a parsed copy; empty otherwise.
    pub body: Vec<u8>,
}

/// Milliseconds since the Unix epoch (0 before it, saturating far after).
pub fn to_ms(at: SystemTime) -> u64 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The time `ms` milliseconds after the Unix epoch, clamped as [`Timestamp::from_unix_millis`]
/// clamps it, so that a hostile or corrupt record cannot overflow a `SystemTime`.
pub fn from_ms(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Timestamp::from_unix_millis(ms).since_epoch()
}

impl Record {
    /// Encodes the record with `body`, the parsed copy's robots.txt (`None` for none).
    pub fn encode(&self, body: Option<&[u8]>) -> Encoded {
        let meta = serde_json::to_vec(&self.clone().with_texts_cut()).unwrap_or_default();
        let body = body.map(deflate_body).unwrap_or_default();
        Encoded {
            version: SCHEMA_VERSION.to_string(),
            meta,
            body,
        }
    }

    /// Decodes a record and its body, which may inflate to at most `max_body_bytes`.
    pub fn decode(
        encoded: &Encoded,
        max_body_bytes: usize,
    ) -> Result<(Record, Option<Vec<u8>>), RecordError> {
        if encoded.version != SCHEMA_VERSION.to_string() {
            return Err(RecordError::Version {
                found: encoded.version.chars().take(16).collect(),
            });
        }
        if encoded.meta.len() > MAX_META_BYTES {
            return Err(RecordError::Meta("too large".into()));
        }
        let record: Record =
            serde_json::from_slice(&encoded.meta).map_err(|e| RecordError::Meta(e.to_string()))?;
        let record = record.within_bounds()?;
        let parsed_copy = record.copy.as_ref().filter(|c| c.no_robots.is_none());
        let body = match (parsed_copy, encoded.body.is_empty()) {
            (Some(copy), false) => {
                let body = inflate(&encoded.body, max_body_bytes)?;
                // The body written with another copy's metadata (a lost race between writers)
                // is caught here, and the record is skipped.
                if body.len() != copy.fetch.bytes {
                    return Err(RecordError::Inconsistent);
                }
                Some(body)
            }
            (None, _) => None,
            // An empty robots.txt deflates to a few bytes, so an empty field is never a body.
            (Some(_), true) => return Err(RecordError::Inconsistent),
        };
        Ok((record, body))
    }
}

impl Record {
    /// The record with every reason cut to [`crate::kept::MAX_KEPT_TEXT_BYTES`].
    fn with_texts_cut(mut self) -> Record {
        if let Some(copy) = &mut self.copy {
            copy.no_robots = copy.no_robots.take().map(kept_text);
        }
        if let Some(backoff) = &mut self.backoff {
            backoff.reason = kept_text(std::mem::take(&mut backoff.reason));
        }
        self
    }

    /// The record as a cache may keep it: reasons cut, and no final URL over
    /// [`MAX_URL_BYTES`] (a URL cut short is another URL, so such a record is not used).
    fn within_bounds(self) -> Result<Record, RecordError> {
        let fetches = self.copy.iter().map(|c| &c.fetch);
        let fetches = fetches.chain(self.backoff.iter().map(|b| &b.last));
        for fetch in fetches {
            if fetch.final_url.len() > MAX_URL_BYTES {
                return Err(RecordError::UrlTooLong(fetch.final_url.len()));
            }
        }
        Ok(self.with_texts_cut())
    }
}

/// A body as the store keeps it: deflated.
///
/// By a compressor kept per thread and reset for each body: a new one allocates and clears its
/// hash table and window, which on a storm of new origins was a third of the cost of keeping a
/// body (page faults and `memset`, BENCHMARKS.md "The miss path"). Level 1 of flate2's zlib-rs
/// backend: three times as fast as miniz_oxide's on the corpus, for 0.277 of the bytes rather
/// than 0.239 (BENCHMARKS.md "The deflate on zlib-rs").
pub fn deflate_body(body: &[u8]) -> Vec<u8> {
    thread_local! {
        static COMPRESSOR: std::cell::RefCell<flate2::Compress> =
            std::cell::RefCell::new(flate2::Compress::new(flate2::Compression::fast(), false));
    }
    let kept = COMPRESSOR.try_with(|compressor| {
        let mut compressor = compressor.try_borrow_mut().ok()?;
        compressor.reset();
        deflate_with(&mut compressor, body)
    });
    // Only while the thread ends, or if the compressor failed: one of its own.
    kept.ok().flatten().unwrap_or_else(|| {
        let mut compressor = flate2::Compress::new(flate2::Compression::fast(), false);
        deflate_with(&mut compressor, body).unwrap_or_default()
    })
}

/// `body` deflated by `compressor`, fresh or reset; `None` if it fails (it never has).
fn deflate_with(compressor: &mut flate2::Compress, body: &[u8]) -> Option<Vec<u8>> {
    // Text deflates to a quarter or so; the output grows when it needs to.
    let mut out = Vec::with_capacity(body.len() / 4 + 64);
    loop {
        let consumed = usize::try_from(compressor.total_in()).ok()?;
        let input = body.get(consumed..)?;
        match compressor.compress_vec(input, &mut out, flate2::FlushCompress::Finish) {
            Ok(flate2::Status::StreamEnd) => return Some(out),
            Ok(_) => out.reserve(out.capacity().max(64)),
            Err(_) => return None,
        }
    }
}

/// Inflates at most `max` bytes; more is an error (a record written with a larger limit, or
/// garbage), never an allocation of whatever the bytes claim.
pub(crate) fn inflate(deflated: &[u8], max: usize) -> Result<Vec<u8>, RecordError> {
    let mut out = Vec::new();
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    flate2::read::DeflateDecoder::new(deflated)
        .take(limit)
        .read_to_end(&mut out)
        .map_err(|e| RecordError::Body(e.to_string()))?;
    if out.len() > max {
        return Err(RecordError::Body(format!("inflates past {max} bytes")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kept::MAX_KEPT_TEXT_BYTES;
    use std::time::Duration;

    fn fetch() -> StoredFetch {
        StoredFetch {
            status: Some(200),
            bytes: BODY.len(),
            truncated: false,
            final_url: "https://example.com/robots.txt".into(),
            redirects: 0,
            fetched_at_ms: 1_795_000_000_000,
            duration_ms: 12,
            address: None,
            etag: None,
            last_modified: None,
            challenge: None,
        }
    }

    fn parsed() -> Record {
        Record {
            copy: Some(StoredCopy {
                fetch: fetch(),
                no_robots: None,
                kept_at_ms: 1_795_000_000_012,
                expires_at_ms: 1_795_086_400_000,
            }),
            backoff: Some(StoredBackoff {
                since_ms: 1_795_090_000_000,
                failures: 2,
                next_retry_ms: 1_795_090_120_000,
                last: fetch(),
                reason: "HTTP status 503".into(),
            }),
        }
    }

    const BODY: &[u8] = b"User-agent: *\nDisallow: /private\n";

    /// The compressor a thread keeps is reset between bodies: each one, whatever came before
    /// it (empty, text, a large body that does not deflate), inflates back to itself.
    #[test]
    fn bodies_deflated_one_after_another_each_inflate_to_themselves() {
        let mut noise = Vec::with_capacity(600_000);
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        while noise.len() < 600_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            noise.extend_from_slice(&seed.to_le_bytes());
        }
        let text = "User-agent: *\nDisallow: /private\n"
            .repeat(10_000)
            .into_bytes();
        for body in [&b""[..], BODY, &noise, &text, BODY, b"", &text[..7]] {
            let deflated = deflate_body(body);
            assert_eq!(inflate(&deflated, body.len()).unwrap(), body);
        }
        assert!(deflate_body(&text).len() < text.len() / 20);
    }

    #[test]
    fn a_record_and_its_body_round_trip() {
        let encoded = parsed().encode(Some(BODY));
        let (record, body) = Record::decode(&encoded, 512_000).expect("decodes");
        assert_eq!(record, parsed());
        assert_eq!(body.as_deref(), Some(BODY));
    }

    #[test]
    fn the_servers_address_is_kept_and_a_record_without_it_reads_as_unknown() {
        let mut record = parsed();
        record.copy.as_mut().unwrap().fetch.address = Some("2001:db8::7".parse().unwrap());
        let encoded = record.encode(Some(BODY));
        let json = String::from_utf8(encoded.meta.clone()).unwrap();
        assert!(json.contains(r#""address":"2001:db8::7""#), "{json}");
        assert_eq!(Record::decode(&encoded, 512_000).unwrap().0, record);
        // Records written before the address was kept have no such member.
        let encoded = parsed().encode(Some(BODY));
        let json = String::from_utf8(encoded.meta.clone()).unwrap();
        assert!(!json.contains("address"), "{json}");
        let (read, _) = Record::decode(&encoded, 512_000).unwrap();
        assert_eq!(read.copy.unwrap().fetch.address, None);
    }

    #[test]
    fn bodies_are_compressed() {
        let body = BODY.repeat(1000);
        let encoded = parsed().encode(Some(&body));
        assert!(
            Record::decode(&encoded, 512_000).is_err(),
            "length differs from the metadata"
        );
        assert!(
            encoded.body.len() * 10 < body.len(),
            "{}",
            encoded.body.len()
        );
    }

    #[test]
    fn another_schema_version_is_refused() {
        let mut encoded = parsed().encode(Some(BODY));
        encoded.version = "2".into();
        assert!(matches!(
            Record::decode(&encoded, 512_000),
            Err(RecordError::Version { .. })
        ));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let good = parsed().encode(Some(BODY));
        let cases = [
            Encoded {
                meta: b"{not json".to_vec(),
                ..good.clone()
            },
            Encoded {
                meta: vec![b' '; MAX_META_BYTES + 1],
                ..good.clone()
            },
            Encoded {
                body: b"not deflate".to_vec(),
                ..good.clone()
            },
            Encoded {
                body: Vec::new(),
                ..good.clone()
            },
            Encoded {
                version: "\u{0}garbage".into(),
                ..good.clone()
            },
        ];
        for encoded in cases {
            assert!(Record::decode(&encoded, 512_000).is_err(), "{encoded:?}");
        }
    }

    #[test]
    fn a_body_past_the_limit_is_refused_without_inflating_it_all() {
        let bomb = vec![b'a'; 10 * 1024 * 1024];
        let encoded = parsed().encode(Some(&bomb));
        assert!(matches!(
            Record::decode(&encoded, 512_000),
            Err(RecordError::Body(_))
        ));
    }

    #[test]
    fn what_comes_out_of_a_record_is_bounded() {
        // As another replica, or anyone with access to the store, could have written it.
        let mut long = parsed();
        let backoff = long.backoff.as_mut().unwrap();
        backoff.reason = format!("error sending request for url ({})", "é".repeat(20_000));
        let meta = serde_json::to_vec(&long).unwrap();
        let encoded = Encoded {
            meta,
            ..parsed().encode(Some(BODY))
        };
        let (record, _) = Record::decode(&encoded, 512_000).expect("decodes");
        let reason = &record.backoff.unwrap().reason;
        assert!(reason.len() <= MAX_KEPT_TEXT_BYTES, "{}", reason.len());
        assert!(reason.starts_with("error sending request for url (é"));

        let mut far = parsed();
        far.copy.as_mut().unwrap().fetch.final_url =
            format!("https://example.com/{}", "a".repeat(MAX_URL_BYTES));
        let encoded = Encoded {
            meta: serde_json::to_vec(&far).unwrap(),
            ..parsed().encode(Some(BODY))
        };
        assert!(matches!(
            Record::decode(&encoded, 512_000),
            Err(RecordError::UrlTooLong(_))
        ));
    }

    #[test]
    fn what_goes_into_a_record_is_bounded() {
        let mut long = parsed();
        long.backoff.as_mut().unwrap().reason = "x".repeat(100_000);
        let encoded = long.encode(Some(BODY));
        assert!(encoded.meta.len() < 2_000, "{}", encoded.meta.len());
    }

    #[test]
    fn times_convert_and_clamp() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_795_000_000_123);
        assert_eq!(from_ms(to_ms(at)), at);
        assert_eq!(to_ms(SystemTime::UNIX_EPOCH - Duration::from_secs(1)), 0);
        let _ = from_ms(u64::MAX);
    }
}
