//! How often each key was used lately: a count-min sketch of 4-bit counters that halves itself
//! every so many uses, as TinyLFU describes it (Einziger, Friedman and Manes, 2017, section 3)
//! and Caffeine's `FrequencySketch` builds it.
//!
//! A key's estimate is the least of its four counters, each in a row of its own: collisions
//! only ever add, so the least is the closest. Counters stop at 15; a cache only needs to tell
//! the used from the more used. The halving ages what was popular once: after ten additions per
//! counter word, every counter is halved, so a key must keep being used to keep its standing.
//!
//! The hashes are the cache's own keyed SipHash, so a stranger cannot choose keys that collide
//! here to raise a victim's standing.

/// The counters of one shard.
#[derive(Debug)]
pub(super) struct Sketch {
    /// Sixteen 4-bit counters per word.
    words: Box<[u64]>,
    /// `words.len() - 1`; the length is a power of two.
    mask: usize,
    /// Additions since the last halving.
    additions: u32,
    /// Additions between two halvings.
    sample: u32,
}

/// Odd multipliers that draw four independent rows from one hash.
const SEEDS: [u64; 4] = [
    0x9e37_79b9_7f4a_7c15,
    0xc2b2_ae3d_27d4_eb4f,
    0x1656_67b1_9e37_79f9,
    0x85eb_ca77_c2b2_ae63,
];

/// The most a counter holds.
pub(super) const MAX_COUNT: u64 = 15;

impl Sketch {
    /// Counters for about `entries` keys in use at once (one word per key, as in Caffeine).
    pub(super) fn new(entries: usize) -> Sketch {
        let len = entries.clamp(8, 1 << 24).next_power_of_two();
        Sketch {
            words: vec![0; len].into_boxed_slice(),
            mask: len - 1,
            additions: 0,
            sample: u32::try_from(len * 10).unwrap_or(u32::MAX),
        }
    }

    /// The word and the bit offset of `hash`'s counter in row `row`.
    fn counter(&self, hash: u64, row: usize) -> (usize, u32) {
        let mixed = (hash ^ (hash >> 29)).wrapping_mul(SEEDS[row]);
        let word = usize::try_from(mixed >> 32).unwrap_or(usize::MAX) & self.mask;
        let nibble = u32::try_from((mixed >> 24) & 15).unwrap_or(0);
        (word, nibble * 4)
    }

    /// Counts one use of the key whose hash is `hash`.
    pub(super) fn increment(&mut self, hash: u64) {
        let mut added = false;
        for row in 0..SEEDS.len() {
            let (word, shift) = self.counter(hash, row);
            if (self.words[word] >> shift) & MAX_COUNT < MAX_COUNT {
                self.words[word] += 1 << shift;
                added = true;
            }
        }
        if added {
            self.additions += 1;
            if self.additions >= self.sample {
                self.halve();
            }
        }
    }

    /// The estimated uses of the key whose hash is `hash`, 0 to 15.
    pub(super) fn frequency(&self, hash: u64) -> u8 {
        let least = (0..SEEDS.len())
            .map(|row| {
                let (word, shift) = self.counter(hash, row);
                (self.words[word] >> shift) & MAX_COUNT
            })
            .min()
            .unwrap_or(0);
        u8::try_from(least).unwrap_or(u8::MAX)
    }

    /// Every counter halved: what was used long ago weighs half as much as what is used now.
    fn halve(&mut self) {
        for word in self.words.iter_mut() {
            *word = (*word >> 1) & 0x7777_7777_7777_7777;
        }
        self.additions /= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    fn hash(n: u64) -> u64 {
        std::hash::RandomState::new().hash_one(n)
    }

    #[test]
    fn counts_uses_up_to_fifteen() {
        let mut sketch = Sketch::new(1024);
        let key = hash(1);
        assert_eq!(sketch.frequency(key), 0);
        for expected in 1..=20u8 {
            sketch.increment(key);
            assert_eq!(sketch.frequency(key), expected.min(15));
        }
    }

    #[test]
    fn keys_used_once_stay_apart_from_a_key_used_often() {
        let mut sketch = Sketch::new(1024);
        let hot = hash(u64::MAX);
        for _ in 0..10 {
            sketch.increment(hot);
        }
        let hasher = std::hash::RandomState::new();
        let once: Vec<u64> = (0..1000).map(|n: u64| hasher.hash_one(n)).collect();
        for &key in &once {
            sketch.increment(key);
        }
        assert_eq!(sketch.frequency(hot), 10);
        let overestimated = once
            .iter()
            .filter(|&&key| sketch.frequency(key) > 2)
            .count();
        assert!(
            overestimated < 10,
            "{overestimated} of 1000 counted above 2"
        );
    }

    #[test]
    fn halves_after_its_sample_so_old_popularity_fades() {
        let mut sketch = Sketch::new(8);
        let old = hash(7);
        for _ in 0..8 {
            sketch.increment(old);
        }
        assert_eq!(sketch.frequency(old), 8);
        // 80 additions make a sample for 8 words: the 8 above and these.
        let hasher = std::hash::RandomState::new();
        for n in 0..72u64 {
            sketch.increment(hasher.hash_one(n));
        }
        assert!(sketch.frequency(old) <= 7, "{}", sketch.frequency(old));
        assert!(sketch.frequency(old) >= 4, "{}", sketch.frequency(old));
    }
}
