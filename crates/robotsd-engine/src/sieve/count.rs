//! What a sieve will hold, counted before it is built.

use std::cmp::Ordering;
use std::mem::size_of;

use super::automaton::Automaton;
use super::{Member, Node, Planned, Run};

/// Heap bytes of the sieve the index builds of `forms` (the wildcard forms of one set), counted
/// without building it, so that a parsed file is charged what its sieve will hold before a check
/// builds it. Exact, except that forms the index keeps once (the same pattern on two lines) are
/// counted each time: the figure never falls short. Sorting rather than hashing, and sorting
/// integers where it can, since every parse of a file of many wildcard rules pays for it.
pub(crate) fn heap_of(forms: &[Planned<'_>], min_run: usize) -> usize {
    // Runs: the forms by prefix (a prefix never holds a NUL byte, so zero-padded heads order
    // as the prefixes do).
    let mut by_prefix: Vec<(u64, u32)> = (0..forms.len())
        .map(|i| (head(forms[i].prefix.iter().copied()), i as u32))
        .collect();
    by_prefix.sort_unstable_by(|a, b| {
        (a.0.cmp(&b.0)).then_with(|| forms[a.1 as usize].prefix.cmp(forms[b.1 as usize].prefix))
    });
    let mut kept = Vec::new();
    let mut runs = 0;
    for run in by_prefix
        .chunk_by(|a, b| a.0 == b.0 && forms[a.1 as usize].prefix == forms[b.1 as usize].prefix)
    {
        if run.len() >= min_run {
            runs += 1;
            kept.extend(run.iter().map(|&(_, i)| i));
        }
    }
    if runs == 0 {
        return 0;
    }
    // Every segment of the kept forms, from each form's last (the order the trie reads them),
    // and each form's range of them.
    let mut segments: Vec<&[u8]> = Vec::new();
    let mut sequences: Vec<(bool, u32, u32)> = Vec::with_capacity(kept.len());
    for &i in &kept {
        let form = &forms[i as usize];
        let tail = form.tail.get(1..).unwrap_or_default();
        let anchored = form.anchored && tail.last().is_some_and(|&b| b != b'*');
        let start = segments.len() as u32;
        segments.extend(tail.rsplit(|&b| b == b'*').filter(|s| !s.is_empty()));
        sequences.push((anchored, start, segments.len() as u32));
    }
    // Distinct segments, each read backwards: the automaton's states are their distinct
    // prefixes, so sorted, each adds what it does not share with the one before it.
    let mut order: Vec<(u64, u32)> = (0..segments.len())
        .map(|i| (head(backwards(segments[i])), i as u32))
        .collect();
    sort_refined(&mut order, |a, b| {
        backwards(segments[a as usize]).cmp(backwards(segments[b as usize]))
    });
    let mut ids = vec![0u32; segments.len()];
    let (mut distinct, mut states, mut segment_bytes) = (0u32, 1, 0);
    let mut before: &[u8] = &[];
    for (n, &(_, i)) in order.iter().enumerate() {
        let seg = segments[i as usize];
        if n == 0 || seg != before {
            let shared = backwards(before)
                .zip(backwards(seg))
                .take_while(|(a, b)| a == b)
                .count();
            states += seg.len() - shared;
            segment_bytes += seg.len();
            distinct += 1;
            before = seg;
        }
        ids[i as usize] = distinct - 1;
    }
    // Trie nodes are the distinct leading parts of the sequences, under one of two roots.
    let seq = |&(_, a, b): &(bool, u32, u32)| &ids[a as usize..b as usize];
    let mut order: Vec<(u64, u32)> = (0..sequences.len())
        .map(|i| {
            let sequence = &sequences[i];
            let first = seq(sequence).first().map_or(0, |&id| u64::from(id) + 1);
            ((u64::from(sequence.0) << 33) | first, i as u32)
        })
        .collect();
    sort_refined(&mut order, |a, b| {
        seq(&sequences[a as usize]).cmp(seq(&sequences[b as usize]))
    });
    let sequences: Vec<(bool, u32, u32)> =
        order.iter().map(|&(_, i)| sequences[i as usize]).collect();
    let (mut nodes, mut first_level, mut bare) = (0, 0, 0);
    for (n, this) in sequences.iter().enumerate() {
        let parts = seq(this);
        let shared = n.checked_sub(1).map_or(0, |m| {
            let before = &sequences[m];
            if before.0 != this.0 {
                return 0;
            }
            seq(before)
                .iter()
                .zip(parts)
                .take_while(|(a, b)| a == b)
                .count()
        });
        nodes += parts.len() - shared;
        first_level += usize::from(shared == 0 && !parts.is_empty());
        bare += usize::from(parts.is_empty());
    }
    // Only the segments that end a tail have roots (the first of a sequence read from the end).
    let mut ends_a_tail = vec![false; distinct as usize];
    for sequence in &sequences {
        if let Some(&first) = seq(sequence).first() {
            ends_a_tail[first as usize] = true;
        }
    }
    let rooted = ends_a_tail.iter().filter(|&&e| e).count();
    let (members, segments) = (kept.len() - bare, distinct as usize);
    Automaton::heap_of(states)
        + segment_bytes
        + (segments + 1) * size_of::<u32>()
        + rooted * size_of::<(u32, u32)>()
        + (nodes + 1) * size_of::<Node>()
        + (nodes - first_level) * size_of::<u32>()
        + (members + bare) * size_of::<Member>()
        + runs * size_of::<Run>()
}

/// Sorts `(key, item)` pairs by key, and items of equal keys by `finer` (an order the keys
/// coarsen): most comparisons are then of two integers.
fn sort_refined(pairs: &mut [(u64, u32)], mut finer: impl FnMut(u32, u32) -> Ordering) {
    pairs.sort_unstable();
    for group in pairs.chunk_by_mut(|a, b| a.0 == b.0) {
        if group.len() > 1 {
            group.sort_unstable_by(|a, b| finer(a.1, b.1));
        }
    }
}

fn backwards(bytes: &[u8]) -> impl Iterator<Item = u8> + '_ {
    bytes.iter().rev().copied()
}

/// The first eight bytes as a big-endian integer, zero-padded: ordered as the bytes are when they
/// hold no NUL, and a coarser order otherwise, which a comparison of the rest refines.
fn head(bytes: impl Iterator<Item = u8>) -> u64 {
    let mut head = [0u8; 8];
    for (slot, b) in head.iter_mut().zip(bytes) {
        *slot = b;
    }
    u64::from_be_bytes(head)
}
