//! Lower-case hex, for the digests in answers.

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// A SHA-256 digest as a quoted JSON string of lower-case hex, written in one piece: it is in
/// every check answer, and a push per digit cost a capacity check each.
pub fn push_quoted_digest(out: &mut Vec<u8>, digest: &[u8; 32]) {
    let mut text = [b'"'; 66];
    for (pair, b) in text[1..65].chunks_exact_mut(2).zip(digest) {
        pair[0] = DIGITS[usize::from(b >> 4)];
        pair[1] = DIGITS[usize::from(b & 0xF)];
    }
    out.extend_from_slice(&text);
}

/// `bytes` as lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .flat_map(|b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 0xF)]])
        .map(char::from)
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn spells_every_byte_in_two_lower_case_digits() {
        assert_eq!(super::hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(super::hex(&[]), "");
    }

    #[test]
    fn a_quoted_digest_is_its_hex_in_quotes() {
        let digest: [u8; 32] = std::array::from_fn(|i| (i * 37) as u8);
        let mut out = Vec::new();
        super::push_quoted_digest(&mut out, &digest);
        assert_eq!(out, format!("\"{}\"", super::hex(&digest)).into_bytes());
    }
}
