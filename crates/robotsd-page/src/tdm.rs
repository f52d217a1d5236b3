//! W3C TDMRep (the TDM Reservation Protocol, Final Community Group Report): whether the rights
//! holder reserves text and data mining, and the policy under which it may be licensed.
//!
//! - A value is `1` (reserved) or `0` (not reserved); anything else is a protocol error and
//!   leaves the reservation unset (§ "tdm-reservation"): it sets nothing, so it never erases a
//!   valid value an earlier layer gave (a header's `1` stands beside a `meta` tag's `yes`), and
//!   [`Tdm::invalid`] names the layer.
//! - The origin's `/.well-known/tdmrep.json` ([`TdmFile`]) is read first, the response's
//!   `tdm-reservation` / `tdm-policy` headers supersede it, and the HTML `meta` tags supersede
//!   both; a layer that does not set a property leaves the earlier value (§ "Processing
//!   priority"). [`Tdm::layer`] applies one layer.
//! - `tdm-policy` is not processed when the reservation is `0`, so it is not reported then.
//!
//! Where TDMRep is silent, robotsd decides, and `docs/page.md` says so: one layer that gives the
//! reservation both `1` and `0` (two `tdm-reservation` headers) reserves, since robotsd fails
//! closed toward the publisher where it cannot know; two different policies in one layer are a
//! protocol error for the policy; the same value repeated is that value.

use robotsd_engine::{escape_pattern, path_params_query, pattern};

/// Where a TDMRep value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TdmSource {
    /// The origin's `/.well-known/tdmrep.json`.
    WellKnown,
    /// The response's headers.
    Header,
    /// The document's `meta` tags.
    Meta,
}

impl TdmSource {
    /// The name answers use.
    pub fn as_str(self) -> &'static str {
        match self {
            TdmSource::WellKnown => "well_known",
            TdmSource::Header => "header",
            TdmSource::Meta => "meta",
        }
    }
}

/// `1`: reserved; `0`: not reserved; anything else is no value.
pub fn reservation(value: &str) -> Option<bool> {
    match value.trim_matches([' ', '\t']) {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    }
}

/// What one layer says: the values it gives each property, in order (field lines, or tags).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layer {
    /// Every `tdm-reservation` value, as written.
    pub reservations: Vec<String>,
    /// Every `tdm-policy` value, as written.
    pub policies: Vec<String>,
}

/// One property of one layer: unset when absent, a protocol error, or given two values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Property<T> {
    Absent,
    Error,
    Value(T),
}

fn property<'a, T: PartialEq>(
    values: &'a [String],
    read: impl Fn(&'a str) -> Option<T>,
) -> Property<T> {
    let mut found = Property::Absent;
    for value in values {
        let Some(value) = read(value) else {
            return Property::Error;
        };
        match &found {
            Property::Value(first) if *first != value => return Property::Error,
            Property::Value(_) => {}
            _ => found = Property::Value(value),
        }
    }
    found
}

/// The reservation and policy in force after the layers applied so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tdm {
    /// `Some(true)`: reserved; `Some(false)`: not reserved; `None`: unset.
    pub reservation: Option<bool>,
    /// Where the reservation came from.
    pub reservation_source: Option<TdmSource>,
    /// The policy's URL, as written.
    pub policy: Option<String>,
    /// Where it came from.
    pub policy_source: Option<TdmSource>,
    /// The layers that gave a `tdm-reservation` other than `0` or `1`, which set nothing.
    pub invalid: Vec<TdmSource>,
}

impl Tdm {
    /// Applies a layer above the ones applied before: what it sets supersedes them, what it
    /// leaves absent does not reset them. An invalid reservation sets nothing; `1` and `0` in
    /// one layer reserve.
    pub fn layer(&mut self, source: TdmSource, layer: &Layer) {
        let values = layer.reservations.iter().map(|v| reservation(v));
        if values.clone().any(|v| v.is_none()) && !self.invalid.contains(&source) {
            self.invalid.push(source);
        }
        if let Some(reserved) = values.flatten().reduce(|a, b| a || b) {
            self.reservation = Some(reserved);
            self.reservation_source = Some(source);
        }
        let policy = property(&layer.policies, |p| {
            let p = p.trim_matches([' ', '\t']);
            (!p.is_empty()).then_some(p)
        });
        match policy {
            Property::Absent => {}
            Property::Error => {
                self.policy = None;
                self.policy_source = Some(source);
            }
            Property::Value(value) => {
                self.policy = Some(value.to_owned());
                self.policy_source = Some(source);
            }
        }
    }

    /// The policy as an agent may use it: none when the reservation is not `1` (TDMRep: a
    /// policy beside `0` is not processed).
    pub fn policy_in_force(&self) -> Option<&str> {
        (self.reservation == Some(true))
            .then_some(self.policy.as_deref())
            .flatten()
    }
}

/// The most rules of a `tdmrep.json` read; later rules are left out, counted.
pub const MAX_FILE_RULES: usize = 4096;

/// The longest `location` or `tdm-policy` kept, in bytes; a rule with a longer one is left out.
pub const MAX_FILE_VALUE_BYTES: usize = 2048;

/// One rule of a `tdmrep.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRule {
    /// The pattern, as written.
    pub location: String,
    /// `Some(true)` / `Some(false)`; `None` for a value other than `0` or `1`.
    pub reservation: Option<bool>,
    /// The policy, if any.
    pub policy: Option<String>,
    /// Its position in the file's array, from 0.
    pub index: usize,
}

/// An origin's `/.well-known/tdmrep.json`: its rules in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TdmFile {
    /// The rules kept, in the file's order.
    pub rules: Vec<FileRule>,
    /// Rules left out: past [`MAX_FILE_RULES`], not objects, without a string `location`, or
    /// with a value over [`MAX_FILE_VALUE_BYTES`].
    pub skipped: usize,
}

/// Why a `tdmrep.json` is not a rule list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TdmFileError {
    /// Not JSON.
    #[error("not JSON: {0}")]
    Json(String),
    /// JSON, but not an array.
    #[error("not a JSON array of rules")]
    NotAnArray,
}

impl TdmFile {
    /// Reads a `tdmrep.json` (the caller bounds its size, as a robots.txt is bounded).
    pub fn parse(bytes: &[u8]) -> Result<TdmFile, TdmFileError> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| TdmFileError::Json(e.to_string()))?;
        let serde_json::Value::Array(items) = value else {
            return Err(TdmFileError::NotAnArray);
        };
        let mut file = TdmFile::default();
        for (index, item) in items.iter().enumerate() {
            let rule = (file.rules.len() < MAX_FILE_RULES)
                .then(|| file_rule(index, item))
                .flatten();
            match rule {
                Some(rule) => file.rules.push(rule),
                None => file.skipped += 1,
            }
        }
        Ok(file)
    }

    /// The first rule whose `location` matches `url`'s path (TDMRep: "the most specific match
    /// is the first in sequence"), matched as robots.txt patterns are (`*`, a final `$`,
    /// case-sensitive), or `None`: unset for this URL.
    ///
    /// Percent-encoded unreserved characters (letters, digits, `-._~`) are decoded in both
    /// before they are compared, as TDMRep asks; other escapes compare as written (in upper
    /// case, as robots.txt's are).
    pub fn rule_for(&self, url: &str) -> Option<&FileRule> {
        let path = path_params_query(url);
        let path = decode_unreserved(path.as_bytes());
        self.rules.iter().find(|rule| {
            let location = escape_pattern(rule.location.as_bytes());
            pattern::matches(&path, &decode_unreserved(&location))
        })
    }
}

/// `bytes` with every `%XX` that encodes an unreserved character (RFC 3986 §2.3) decoded.
fn decode_unreserved(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let decoded_at = |i: usize| -> Option<u8> {
        let (high, low) = (hex(*bytes.get(i + 1)?)?, hex(*bytes.get(i + 2)?)?);
        let byte = high << 4 | low;
        (byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')).then_some(byte)
    };
    if !(0..bytes.len()).any(|i| bytes[i] == b'%' && decoded_at(i).is_some()) {
        return std::borrow::Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], decoded_at(i)) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

fn file_rule(index: usize, item: &serde_json::Value) -> Option<FileRule> {
    let object = item.as_object()?;
    let location = object.get("location")?.as_str()?;
    if location.len() > MAX_FILE_VALUE_BYTES {
        return None;
    }
    let reservation = match object.get("tdm-reservation") {
        Some(serde_json::Value::Number(n)) => match n.as_u64() {
            Some(1) => Some(true),
            Some(0) => Some(false),
            _ => None,
        },
        Some(serde_json::Value::String(s)) => reservation(s),
        _ => None,
    };
    let policy = match object.get("tdm-policy") {
        Some(serde_json::Value::String(p)) if p.len() <= MAX_FILE_VALUE_BYTES => Some(p.clone()),
        Some(serde_json::Value::String(_)) => return None,
        _ => None,
    };
    Some(FileRule {
        location: location.to_owned(),
        reservation,
        policy,
        index,
    })
}

impl FileRule {
    /// The rule as a layer of values.
    pub fn as_layer(&self) -> Layer {
        let reservation = match self.reservation {
            Some(true) => "1",
            Some(false) => "0",
            None => "error",
        };
        Layer {
            reservations: vec![reservation.to_owned()],
            policies: self.policy.iter().cloned().collect(),
        }
    }
}

#[cfg(test)]
mod tests;
