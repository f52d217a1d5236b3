//! One pass over a rule value at parse time: what normalisation may change, whether the RFC 9309
//! form may differ, and where the wildcard starts.

use crate::scratch::fx_step;
use crate::tokenizer::tail_word;

/// What [`scan_value`] learns of a rule value in one pass.
pub(super) struct ValueScan {
    /// A `%` or a byte ≥ 0x80: normalisation may change the value.
    pub(super) maybe_escaped: bool,
    /// A `$` or a `?`: with [`ValueScan::maybe_escaped`], what may make the value's RFC 9309
    /// form differ from Google's (`percent::pattern_rewritten` decides on the few that have one).
    pub(super) dollar_or_query: bool,
    pub(super) first_star: Option<usize>,
    /// The value's hash, for finding repeated patterns ([`fx_step`]).
    pub(super) hash: u64,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Marks the bytes of `word` equal to `byte`; the lowest mark is always exact (later ones may not
/// be), so a word has such a byte if and only if it has a mark.
#[inline]
fn equal(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGH
}

/// Scans a rule value eight bytes at a time (bit tricks on a `u64`): values are short, and a
/// call to a vectorised search per question cost more than the scan itself.
pub(super) fn scan_value(value: &[u8]) -> ValueScan {
    let mut scan = ValueScan {
        maybe_escaped: false,
        dollar_or_query: false,
        first_star: None,
        hash: value.len() as u64,
    };
    let (words, rest) = value.as_chunks::<8>();
    for (i, word) in words.iter().enumerate() {
        scan.add(u64::from_le_bytes(*word), u64::MAX, 8 * i);
    }
    if !rest.is_empty() {
        let valid = (1 << (8 * rest.len())) - 1;
        scan.add(
            tail_word(value, rest.len()),
            valid,
            value.len() - rest.len(),
        );
    }
    scan
}

impl ValueScan {
    /// Adds the word of the value's bytes from `at`, of which the bytes under `valid` are the
    /// value's (the rest is padding).
    #[inline]
    fn add(&mut self, word: u64, valid: u64, at: usize) {
        self.hash = fx_step(self.hash, word);
        // One cheap test first, since four values in five have none of what is asked below:
        // bytes below `-` (among them `$`, `%` and `*`), a `?`, or a byte ≥ 0x80. The marks of
        // bytes below `-` are exact up to the first, so masking the padding off is too.
        let below_dash = word.wrapping_sub(ONES * u64::from(b'-')) & !word;
        if (below_dash | word | equal(word, b'?')) & HIGH & valid == 0 {
            return;
        }
        self.maybe_escaped |= (word & HIGH) | equal(word, b'%') != 0;
        self.dollar_or_query |= equal(word, b'$') | equal(word, b'?') != 0;
        if self.first_star.is_none() {
            let stars = equal(word, b'*');
            if stars != 0 {
                // Zero padding cannot mark a `*`, so the position is within the value.
                self.first_star = Some(at + (stars.trailing_zeros() / 8) as usize);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_agrees_with_the_plain_questions() {
        let alphabet = b"a/-.,+&$%*?\x80\xff\x00 ";
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for len in 0..40 {
            for _ in 0..200 {
                let value: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        alphabet[(seed % alphabet.len() as u64) as usize]
                    })
                    .collect();
                let scan = scan_value(&value);
                let has = |set: &[u8]| value.iter().any(|b| set.contains(b));
                assert_eq!(
                    scan.maybe_escaped,
                    has(b"%") || value.iter().any(|&b| b >= 0x80),
                    "{value:?}"
                );
                assert_eq!(scan.dollar_or_query, has(b"$?"), "{value:?}");
                assert_eq!(
                    scan.first_star,
                    value.iter().position(|&b| b == b'*'),
                    "{value:?}"
                );
            }
        }
    }
}
