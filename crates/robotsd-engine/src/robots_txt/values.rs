//! One pass over a rule value at parse time: what normalisation may change, and where the
//! wildcard starts.

/// What [`scan_value`] learns of a rule value in one pass.
pub(super) struct ValueScan {
    /// A `%` or a byte ≥ 0x80: normalisation may change the value.
    pub(super) maybe_escaped: bool,
    pub(super) first_star: Option<usize>,
}

/// Scans a rule value eight bytes at a time (bit tricks on a `u64`): values are short, and a
/// call to a vectorised search per question cost more than the scan itself.
pub(super) fn scan_value(value: &[u8]) -> ValueScan {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Marks bytes equal to `byte`; the lowest mark is always exact (later ones may not be).
    let equal = |word: u64, byte: u8| {
        let x = word ^ (ONES * u64::from(byte));
        x.wrapping_sub(ONES) & !x & HIGH
    };
    let mut scan = ValueScan {
        maybe_escaped: false,
        first_star: None,
    };
    for (i, chunk) in value.chunks(8).enumerate() {
        let mut bytes = [0u8; 8];
        bytes[..chunk.len()].copy_from_slice(chunk);
        let word = u64::from_le_bytes(bytes);
        scan.maybe_escaped |= (word & HIGH) | equal(word, b'%') != 0;
        if scan.first_star.is_none() {
            let stars = equal(word, b'*');
            if stars != 0 {
                // Zero padding cannot mark a `*`, so the position is within the chunk.
                scan.first_star = Some(i * 8 + (stars.trailing_zeros() / 8) as usize);
            }
        }
    }
    scan
}
