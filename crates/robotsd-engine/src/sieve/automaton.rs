//! The sieve's Aho–Corasick automaton: one pass over a path, from its end, finds the rightmost
//! occurrence of every segment.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::{NONE, Scratch};

/// Hashes a trie edge, (state, byte) packed in one integer, with one multiply: the keys are the
/// builder's own numbers, not a stranger's choice, and std's SipHash and the table's regrowth
/// were a sixth of an index's build (issue 58, against Google's reference).
#[derive(Default)]
struct EdgeHasher(u64);

impl Hasher for EdgeHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn finish(&self) -> u64 {
        // The product's high bits are its best mixed: the table indexes by the low ones.
        self.0.rotate_left(26)
    }
}

/// An Aho–Corasick automaton over the reversed segments: a trie numbered breadth first, so that
/// a state's children are consecutive states and an edge is its target's label; failure links;
/// and for each state the nearest state on its failure chain that ends a segment.
#[derive(Debug, Clone)]
pub(super) struct Automaton {
    /// Per state: its first child (the children of `s` are `first[s]..first[s + 1]`).
    first: Box<[u32]>,
    /// Per state: the byte of the edge into it (children's labels ascend).
    labels: Box<[u8]>,
    fail: Box<[u32]>,
    /// Per state: the segment it ends, or NONE; and the nearest state down its failure chain
    /// that ends a segment, or NONE (together, since the pass reads one after the other).
    outs: Box<[(u32, u32)]>,
    /// The root's children as a table, since every failure chain ends there (they are states
    /// 1 to 256 at most; 0 for none).
    root: Box<[u16; 256]>,
}

impl Automaton {
    pub(super) fn build(patterns: &[Vec<u8>]) -> Automaton {
        // At most one edge per byte of the segments: sized once, never regrown.
        let bytes: usize = patterns.iter().map(Vec::len).sum();
        let mut goto: HashMap<u64, u32, BuildHasherDefault<EdgeHasher>> =
            HashMap::with_capacity_and_hasher(bytes, BuildHasherDefault::default());
        let mut trie_ends = Vec::with_capacity(bytes + 1);
        trie_ends.push(NONE);
        for (id, pattern) in patterns.iter().enumerate() {
            let mut state = 0u32;
            for &b in pattern {
                let next = u32::try_from(trie_ends.len()).unwrap_or(NONE);
                state = *goto
                    .entry(u64::from(state) << 8 | u64::from(b))
                    .or_insert_with(|| {
                        trie_ends.push(NONE);
                        next
                    });
            }
            trie_ends[state as usize] = id as u32;
        }
        let states = trie_ends.len();
        let mut edges: Vec<(u32, u8, u32)> = goto
            .iter()
            .map(|(&key, &t)| ((key >> 8) as u32, key as u8, t))
            .collect();
        drop(goto);
        edges.sort_unstable();
        let mut trie_first = vec![0u32; states + 1];
        for &(s, _, _) in &edges {
            trie_first[s as usize + 1] += 1;
        }
        for s in 0..states {
            trie_first[s + 1] += trie_first[s];
        }
        // Breadth first: each state's children take the next numbers, in label order.
        let mut order = Vec::with_capacity(states);
        order.push(0u32);
        let mut first = Vec::with_capacity(states + 1);
        let mut labels = vec![0u8; states];
        let mut at = 0;
        while at < order.len() {
            let old = order[at] as usize;
            first.push(u32::try_from(order.len()).unwrap_or(NONE));
            for &(_, b, t) in &edges[trie_first[old] as usize..trie_first[old + 1] as usize] {
                labels[order.len()] = b;
                order.push(t);
            }
            at += 1;
        }
        first.push(u32::try_from(states).unwrap_or(NONE));
        let mut root = Box::new([0u16; 256]);
        for c in first[0]..first[1] {
            root[labels[c as usize] as usize] = c as u16;
        }
        let mut automaton = Automaton {
            first: first.into_boxed_slice(),
            labels: labels.into_boxed_slice(),
            fail: vec![0; states].into_boxed_slice(),
            outs: order
                .iter()
                .map(|&old| (trie_ends[old as usize], NONE))
                .collect(),
            root,
        };
        // In breadth-first order a state's failure target, shallower, is finished before it.
        for s in 0..states {
            for c in automaton.first[s]..automaton.first[s + 1] {
                let f = if s == 0 {
                    0
                } else {
                    automaton.next(automaton.fail[s], automaton.labels[c as usize])
                };
                automaton.fail[c as usize] = f;
                let (end, output) = automaton.outs[f as usize];
                automaton.outs[c as usize].1 = if end != NONE { f } else { output };
            }
        }
        automaton
    }

    /// Heap bytes of an automaton of `states` states (a trie: one edge into each but the root).
    pub(super) fn heap_of(states: usize) -> usize {
        (states + 1) * size_of::<u32>()
            + states * (size_of::<u8>() + 3 * size_of::<u32>())
            + size_of::<[u16; 256]>()
    }

    #[cfg(test)]
    pub(super) fn heap_size(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(&*self.first)
            + size_of_val(&*self.labels)
            + size_of_val(&*self.fail)
            + size_of_val(&*self.outs)
            + size_of_val(&*self.root)
    }

    #[inline]
    pub(super) fn next(&self, mut state: u32, byte: u8) -> u32 {
        loop {
            if state == 0 {
                return u32::from(self.root[byte as usize]);
            }
            let (a, b) = (
                self.first[state as usize] as usize,
                self.first[state as usize + 1] as usize,
            );
            if let Ok(i) = self.labels[a..b].binary_search(&byte) {
                return (a + i) as u32;
            }
            state = self.fail[state as usize];
        }
    }

    /// The segment state `state` ends (one that [`Automaton::rightmost`] records), as a
    /// segment id.
    #[inline]
    pub(super) fn segment_of(&self, state: u32) -> u32 {
        self.outs[state as usize].0
    }

    /// The next shorter segment on `state`'s output chain, or NONE.
    #[inline]
    pub(super) fn shorter(&self, state: u32) -> u32 {
        self.outs[state as usize].1
    }

    /// Reads `path` backwards and records the start of each segment's rightmost occurrence
    /// (listing in `seen` those of ids below `rooted`, the ones a walk starts from), and at
    /// each position the longest segment that starts there (its state, or NONE): the others
    /// that start there are that state's output chain.
    // Not inlined: inlined into the sieve's closure, its loop cost 6 to 9 % more (the automaton's
    // edge table, issue 58, moved the compiler's decision).
    #[inline(never)]
    pub(super) fn rightmost(
        &self,
        path: &[u8],
        segments: usize,
        rooted: usize,
        scratch: &mut Scratch,
    ) {
        if scratch.occurs.len() < segments {
            scratch.occurs.resize(segments, (0, 0));
        }
        // Every position is written below: only grown, never cleared.
        if scratch.longest.len() < path.len() {
            scratch.longest.resize(path.len(), NONE);
        }
        scratch.generation = scratch.generation.wrapping_add(1);
        if scratch.generation == 0 {
            scratch.occurs.iter_mut().for_each(|o| o.0 = 0);
            scratch.generation = 1;
        }
        scratch.seen.clear();
        scratch.stack.clear();
        let generation = scratch.generation;
        let mut state = 0;
        for (i, &byte) in path.iter().enumerate().rev() {
            state = self.next(state, byte);
            let (end, output) = self.outs[state as usize];
            let mut out = if end != NONE { state } else { output };
            scratch.longest[i] = out;
            while out != NONE {
                let (s, shorter) = self.outs[out as usize];
                let s = s as usize;
                // Seen before, at a later place: so was everything further down its chain.
                let occurs = &mut scratch.occurs[s];
                if occurs.0 == generation {
                    break;
                }
                *occurs = (generation, u32::try_from(i).unwrap_or(NONE));
                if s < rooted {
                    scratch.seen.push(s as u32);
                }
                out = shorter;
            }
        }
    }
}
