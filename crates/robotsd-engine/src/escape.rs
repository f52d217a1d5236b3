//! Normalisation of `allow`/`disallow` values at parse time (SEMANTICS.md §1 "Path matching"),
//! as the reference's `MaybeEscapePattern`: `%xx` escapes are upper-cased and every byte ≥ 0x80 is
//! percent-encoded as `%XX`. Nothing is decoded, and URLs are not touched by the engine.

use std::borrow::Cow;

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Whether `value` would change under [`escape_pattern`]; the common case is "no", so the parser
/// can store the value once.
#[inline]
pub fn needs_escaping(value: &[u8]) -> bool {
    // Fast path for the usual value: all ASCII (checked a word at a time) and no `%`.
    if value.is_ascii() && memchr::memchr(b'%', value).is_none() {
        return false;
    }
    let mut i = 0;
    while i < value.len() {
        let b = value[i];
        if b >= 0x80 {
            return true;
        }
        if b == b'%' && is_hex_pair(value, i) {
            if value[i + 1].is_ascii_lowercase() || value[i + 2].is_ascii_lowercase() {
                return true;
            }
            i += 2;
        }
        i += 1;
    }
    false
}

/// Appends the normalised form of `value` to `out`.
pub fn escape_into(value: &[u8], out: &mut Vec<u8>) {
    out.reserve(value.len());
    let mut i = 0;
    while i < value.len() {
        let b = value[i];
        if b == b'%' && is_hex_pair(value, i) {
            out.push(b'%');
            out.push(value[i + 1].to_ascii_uppercase());
            out.push(value[i + 2].to_ascii_uppercase());
            i += 3;
        } else if b >= 0x80 {
            out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xF)]]);
            i += 1;
        } else {
            out.push(b);
            i += 1;
        }
    }
}

#[inline]
fn is_hex_pair(value: &[u8], i: usize) -> bool {
    i + 2 < value.len() && value[i + 1].is_ascii_hexdigit() && value[i + 2].is_ascii_hexdigit()
}

/// The normalised form of an `allow`/`disallow` value (the reference's `MaybeEscapePattern`).
pub fn escape_pattern(value: &[u8]) -> Cow<'_, [u8]> {
    if needs_escaping(value) {
        let mut out = Vec::with_capacity(value.len() + 8);
        escape_into(value, &mut out);
        Cow::Owned(out)
    } else {
        Cow::Borrowed(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upper_cases_escapes_and_encodes_high_bytes() {
        assert_eq!(&*escape_pattern(b"/a/b/c"), b"/a/b/c");
        assert_eq!(&*escape_pattern("á".as_bytes()), b"%C3%A1");
        assert_eq!(&*escape_pattern(b"%aa"), b"%AA");
        assert_eq!(&*escape_pattern(b"%2f%2F"), b"%2F%2F");
    }

    #[test]
    fn incomplete_escapes_are_left_alone() {
        assert_eq!(&*escape_pattern(b"%a"), b"%a");
        assert_eq!(&*escape_pattern(b"%"), b"%");
        assert_eq!(&*escape_pattern(b"%zz%a"), b"%zz%a");
        assert!(!needs_escaping(b"%a"));
    }
}
