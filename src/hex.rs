//! Lower-case hex, for the digests in answers.

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Appends `bytes` as lower-case hex.
pub fn push_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)]);
        out.push(DIGITS[usize::from(b & 0xF)]);
    }
}

/// `bytes` as lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len() * 2);
    push_hex(&mut out, bytes);
    // Only ASCII digits were pushed.
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn spells_every_byte_in_two_lower_case_digits() {
        assert_eq!(super::hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(super::hex(&[]), "");
    }
}
