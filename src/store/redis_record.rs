//! How [`super::RedisStore`] lays an origin's record out in Redis: one string,
//! `robotsd:{<origin>}:rec`, framed as `<schema version>\n<metadata length>\n<metadata><body>`.
//!
//! Earlier builds kept the record as a hash (`robotsd:{<origin>}:record`, fields `v`, `m`, `b`).
//! Its values pass Redis's 64-byte listpack limit, so Redis stored each one as a hash table:
//! about 400 bytes of overhead an origin, measured at 1M origins where a whole record took
//! 1.38 KB (BENCHMARKS.md). A string costs Redis one key: 1.12 KB an origin. Such a hash is
//! still read until the origin's next write, which replaces it, so a rolling upgrade keeps what
//! the fleet knows.

use super::record::{Encoded, MAX_META_BYTES};
use super::{Lease, Looked, StoreError};

/// Room for the frame's two header lines beyond the metadata and the body.
const HEADER_BYTES: usize = 32;

/// Reads the record, the string or else an earlier build's hash, unless a part of it is larger
/// than its limit (then `too_large`), so that an oversized value is never transferred. No record
/// is `{'s'}`, the tag alone (a nil in a reply is spelt differently in RESP2 and RESP3). A key of
/// another type (written by hand) reads as an unreadable record (`''`), which the next write
/// replaces, rather than as a failure of the store.
/// KEYS: the string, the hash. ARGV: the metadata limit, the body limit.
pub(super) const LOAD: &str = r"
local n = redis.pcall('STRLEN', KEYS[1])
if type(n) ~= 'number' then return {'s', ''} end
if n > 0 then
  if n > tonumber(ARGV[1]) + tonumber(ARGV[2]) + 32 then return 'too_large' end
  return {'s', redis.call('GET', KEYS[1])}
end
if redis.call('EXISTS', KEYS[2]) == 0 then return {'s'} end
local m = redis.pcall('HSTRLEN', KEYS[2], 'm')
local b = redis.pcall('HSTRLEN', KEYS[2], 'b')
if type(m) ~= 'number' or type(b) ~= 'number' then return {'s', ''} end
if m > tonumber(ARGV[1]) or b > tonumber(ARGV[2]) then return 'too_large' end
local f = redis.call('HMGET', KEYS[2], 'v', 'm', 'b')
return {'h', f[1], f[2], f[3]}
";

/// Writes the record and drops an earlier build's hash; then releases the lease if the token
/// given still holds it (compare and delete), so that a fetch's holder stores its result and lets
/// the lease go in one round trip. The body is the one given (`set`),
/// none (`remove`), or the stored one (`keep`: a backoff update keeps the last good copy's
/// body), read from the string's frame or from the hash; an unreadable one keeps nothing (the
/// record is then inconsistent, skipped by readers and replaced by the next fetch).
/// KEYS: the string, the hash, the lease. ARGV: header and metadata, mode, body, time to live
/// (ms), the lease's token or nothing.
pub(super) const SAVE: &str = r"
local body = ''
if ARGV[2] == 'set' then
  body = ARGV[3]
elseif ARGV[2] == 'keep' then
  local old = redis.pcall('GET', KEYS[1])
  if type(old) == 'string' then
    local a = string.find(old, '\n', 1, true)
    local b = a and string.find(old, '\n', a + 1, true)
    local len = b and tonumber(string.sub(old, a + 1, b - 1))
    if len then body = string.sub(old, b + 1 + len) end
  else
    local hashed = redis.pcall('HGET', KEYS[2], 'b')
    if type(hashed) == 'string' then body = hashed end
  end
end
redis.call('SET', KEYS[1], ARGV[1] .. body, 'PX', ARGV[4])
redis.call('DEL', KEYS[2])
if ARGV[5] ~= '' and redis.call('GET', KEYS[3]) == ARGV[5] then redis.call('DEL', KEYS[3]) end
return 1
";

/// Takes the fetch lease if nobody holds it and then reads the record as [`LOAD`] does: one
/// round trip where the lease and the read after it took two. `held` when another holds it.
/// KEYS: the string, the hash, the lease. ARGV: the metadata limit, the body limit, the token,
/// the lease's time to live (ms).
pub(super) fn lease_script() -> String {
    format!(
        "if not redis.call('SET', KEYS[3], ARGV[3], 'NX', 'PX', ARGV[4]) then return 'held' end\n{LOAD}"
    )
}

/// Reads the record as [`LOAD`] does; when none is stored (neither the string nor an earlier
/// build's hash), takes the fetch lease instead, if nobody holds it: `leased`, else `held`. A
/// cold origin's foreground miss then reads and leases in one round trip.
/// KEYS: the string, the hash, the lease. ARGV: the metadata limit, the body limit, the token,
/// the lease's time to live (ms).
pub(super) fn load_or_lease_script() -> String {
    format!(
        "if redis.call('EXISTS', KEYS[1], KEYS[2]) == 0 then\n  \
         if redis.call('SET', KEYS[3], ARGV[3], 'NX', 'PX', ARGV[4]) then return 'leased' end\n  \
         return 'held'\nend\n{LOAD}"
    )
}

/// The key of an origin's record.
pub(super) fn record_key(origin: &str) -> String {
    format!("robotsd:{{{origin}}}:rec")
}

/// The key an earlier build kept the record under, as a hash.
pub(super) fn hashed_record_key(origin: &str) -> String {
    format!("robotsd:{{{origin}}}:record")
}

/// The frame's header and the metadata; the body follows.
pub(super) fn frame(version: &str, meta: &[u8]) -> Vec<u8> {
    let mut framed = Vec::with_capacity(HEADER_BYTES + meta.len());
    framed.extend_from_slice(version.as_bytes());
    framed.push(b'\n');
    framed.extend_from_slice(meta.len().to_string().as_bytes());
    framed.push(b'\n');
    framed.extend_from_slice(meta);
    framed
}

/// The record in `value`, as [`frame`] and a body made it. Anything else reads as a record
/// without a version, which is skipped and later replaced, like garbage.
pub(super) fn unframe(value: &[u8]) -> Encoded {
    let unreadable = Encoded {
        version: String::new(),
        meta: Vec::new(),
        body: Vec::new(),
    };
    let mut parts = value.splitn(3, |&byte| byte == b'\n');
    let (Some(version), Some(length), Some(rest)) = (parts.next(), parts.next(), parts.next())
    else {
        return unreadable;
    };
    let Some(length) = std::str::from_utf8(length)
        .ok()
        .and_then(|length| length.parse::<usize>().ok())
        .filter(|&length| length <= rest.len() && length <= MAX_META_BYTES)
    else {
        return unreadable;
    };
    let (meta, body) = rest.split_at(length);
    Encoded {
        version: String::from_utf8_lossy(version).into_owned(),
        meta: meta.to_vec(),
        body: body.to_vec(),
    }
}

/// The reply of [`lease_script`]: the lease taken, with the record as [`loaded`] reads it; or
/// held by another.
pub(super) fn leased(value: redis::Value) -> Result<Lease<Encoded>, StoreError> {
    match &value {
        redis::Value::BulkString(bytes) if bytes == b"held" => Ok(Lease::Held),
        redis::Value::SimpleString(text) if text == "held" => Ok(Lease::Held),
        _ => loaded(value).map(Lease::Taken),
    }
}

/// The reply of [`load_or_lease_script`]: the lease taken or held when no record is stored,
/// else the record as [`loaded`] reads it.
pub(super) fn looked(value: redis::Value) -> Result<Looked<Encoded>, StoreError> {
    let word = match &value {
        redis::Value::BulkString(bytes) => Some(bytes.as_slice()),
        redis::Value::SimpleString(text) => Some(text.as_bytes()),
        _ => None,
    };
    match word {
        Some(b"leased") => Ok(Looked::Leased),
        Some(b"held") => Ok(Looked::Held),
        _ => loaded(value).map(Looked::Read),
    }
}

/// The reply of [`LOAD`]: the record, `None` when there is none.
pub(super) fn loaded(value: redis::Value) -> Result<Option<Encoded>, StoreError> {
    let malformed = |detail: &str| StoreError::Failed(format!("record reply: {detail}"));
    let parts: Vec<redis::Value> = match value {
        redis::Value::SimpleString(s) if s == "too_large" => return Err(StoreError::TooLarge),
        redis::Value::BulkString(s) if s == b"too_large" => return Err(StoreError::TooLarge),
        redis::Value::Array(parts) => parts,
        _ => return Err(malformed("not an array")),
    };
    let bytes = |value: &redis::Value| -> Result<Option<Vec<u8>>, StoreError> {
        redis::from_redis_value_ref(value).map_err(|e| StoreError::Failed(e.to_string()))
    };
    let tag = parts.first().map(bytes).transpose()?.flatten();
    match (tag.as_deref(), parts.as_slice()) {
        (Some(b"s"), [_]) => Ok(None),
        (Some(b"s"), [_, value]) => Ok(bytes(value)?.map(|value| unframe(&value))),
        (Some(b"h"), [_, version, meta, body]) => {
            match (bytes(version)?, bytes(meta)?, bytes(body)?) {
                (None, None, None) => Ok(None),
                (Some(version), Some(meta), body) => Ok(Some(Encoded {
                    version: String::from_utf8_lossy(&version).into_owned(),
                    meta,
                    body: body.unwrap_or_default(),
                })),
                // A hash without its version or metadata cannot be read: like garbage, it is
                // skipped and later replaced.
                _ => Ok(Some(unframe(b""))),
            }
        }
        _ => Err(malformed("unknown shape")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_and_its_body_come_apart_as_they_went_in() {
        let mut value = frame("1", b"{\"copy\":null}");
        value.extend_from_slice(b"\x00\n\x01deflated\n");
        let encoded = unframe(&value);
        assert_eq!(encoded.version, "1");
        assert_eq!(encoded.meta, b"{\"copy\":null}");
        assert_eq!(encoded.body, b"\x00\n\x01deflated\n");
        assert_eq!(unframe(&frame("1", b"{}")).body, b"");
    }

    #[test]
    fn garbage_reads_as_a_record_without_a_version() {
        for garbage in [
            &b""[..],
            b"1",
            b"1\n",
            b"1\nx\n{}",
            b"1\n99\n{}",
            b"1\n-1\n{}",
            b"1\n99999999999999999999999\n{}",
        ] {
            assert_eq!(unframe(garbage).version, "", "{garbage:?}");
        }
    }

    #[test]
    fn the_tag_alone_is_no_record_and_an_empty_string_an_unreadable_one() {
        let tag = || redis::Value::BulkString(b"s".to_vec());
        assert_eq!(loaded(redis::Value::Array(vec![tag()])).unwrap(), None);
        let empty = redis::Value::BulkString(Vec::new());
        let garbage = loaded(redis::Value::Array(vec![tag(), empty])).unwrap();
        assert_eq!(garbage.map(|encoded| encoded.version), Some(String::new()));
    }

    #[test]
    fn an_origin_s_keys_share_a_hash_tag() {
        assert_eq!(
            record_key("https://example.com:8443"),
            "robotsd:{https://example.com:8443}:rec"
        );
        assert_eq!(
            hashed_record_key("https://example.com:8443"),
            "robotsd:{https://example.com:8443}:record"
        );
    }
}
