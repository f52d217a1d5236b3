//! Deciding many wildcard rules of a set together (issue 40), for the runs of the rule index too
//! large to try one rule at a time.
//!
//! A hostile file holds tens of thousands of distinct patterns beginning `/*`, none of which
//! matches; tried one by one, each costs a pass over the path. Here a pattern's tail (after its
//! literal prefix) is its sequence of literal segments between `*`s, and whether a sequence
//! matches is worked out from the right: for a sequence `R`, `t(R)` is the latest place its
//! first segment can start in a placement of all of `R` (the last segment at the very end when
//! the pattern is anchored with `$`). A pattern of prefix length `p` matches a path that starts
//! with its prefix exactly when `t(tail) ≥ p` (the leftmost placement the matcher in `pattern`
//! finds exists exactly when some placement does). And `t(s·R)` is the start of the rightmost
//! occurrence of `s` that ends by `t(R)`, so tails that end alike share their work: the
//! sequences form a trie read from their last segment, walked from its root only through the
//! nodes whose sequence occurs in the path.
//!
//! One pass of an Aho–Corasick automaton over the reversed segments, from the end of the path,
//! finds the rightmost occurrence of every segment at once; the walk of an occurrence's output
//! links stops at a segment already seen, since everything below it was seen with it, so the
//! pass costs the path plus the distinct segments that occur. A trie node then costs a lookup,
//! and a search of the path before `t` only when its segment's rightmost occurrence is too late.
//! A subtree whose best rule cannot beat the match found so far is not entered.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashMap;

/// No such state, node or segment.
const NONE: u32 = u32::MAX;

/// A rule decided by the sieve, as the index ranks it (see [`rank`]): 16 bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Member {
    /// Precedence: greater wins.
    pub(crate) rank: u64,
    /// The index's rule id (with its derived flag).
    pub(crate) rule: u32,
    /// The run it belongs to, as a position in the sieve's [`Run`]s: it is a candidate only
    /// when that run is on the path's chain.
    pub(crate) run: u32,
}

/// A run whose wildcard members the sieve decides.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run {
    /// The index position of the run's last member, as the path's chain names runs.
    pub(crate) top: u32,
    /// The run's literal prefix's length: a member's tail must start there or later.
    pub(crate) prefix_len: u32,
}

/// Orders rules as the index does (longest pattern, then `allow`, then the earliest line) in one
/// integer, so that a subtree's best can be kept in eight bytes.
pub(crate) fn rank(priority: u32, allow: bool, line: u32) -> u64 {
    (u64::from(priority) << 32)
        | (u64::from(allow) << 31)
        | u64::from(0x7FFF_FFFF - (line & 0x7FFF_FFFF))
}

/// A node of the trie of tails read from the right: the sequence of its own segment followed by
/// its parent's (16 bytes: the trie is most of a sieve).
#[derive(Debug, Clone, Copy)]
struct Node {
    segment: u32,
    /// Its first child in `children` and first member in `members` (best first); the next
    /// node's are where its own end.
    children: u32,
    members: u32,
    /// The member of the subtree with the best rank (every subtree ends in members).
    best: u32,
}

/// The sieve of one set's large runs.
#[derive(Debug, Clone)]
pub(crate) struct Sieve {
    automaton: Automaton,
    /// Segment bytes; segment `s` is `bytes[offsets[s]..offsets[s + 1]]`.
    bytes: Box<[u8]>,
    offsets: Box<[u32]>,
    /// By segment: the trie's first-level nodes ending with it, unanchored and anchored.
    roots: Box<[(u32, u32)]>,
    /// The trie, and one node more that ends the last one's ranges.
    nodes: Box<[Node]>,
    children: Box<[u32]>,
    members: Box<[Member]>,
    /// Members whose tail is all `*`: they match whatever follows their prefix.
    bare: Box<[Member]>,
    /// The runs whose wildcard members the sieve decides, ascending by `top`.
    runs: Box<[Run]>,
}

#[cfg(test)]
thread_local! {
    /// Trie nodes and members looked at on this thread, for tests that bound a check's work.
    pub(crate) static TOUCHED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

#[inline]
fn touch() {
    #[cfg(test)]
    TOUCHED.with(|t| t.set(t.get() + 1));
}

/// The literal segments of a wildcard tail (which starts with `*`), and whether the last is
/// anchored at the end of the path. Empty segments say nothing (`**` is `*`), and a tail that
/// ends with `*` is not anchored whatever follows.
pub(crate) fn segments(tail: &[u8], anchored: bool) -> (Vec<&[u8]>, bool) {
    let mut parts: Vec<&[u8]> = tail
        .get(1..)
        .unwrap_or_default()
        .split(|&b| b == b'*')
        .collect();
    let anchored = anchored && parts.last().is_some_and(|s| !s.is_empty());
    parts.retain(|s| !s.is_empty());
    (parts, anchored)
}

/// A wildcard form as the index sees it before building: its literal prefix (its run), its tail
/// from the first `*`, and whether it is anchored with `$`.
pub(crate) struct Planned<'a> {
    pub(crate) prefix: &'a [u8],
    pub(crate) tail: &'a [u8],
    pub(crate) anchored: bool,
}

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
    let (members, segments) = (kept.len() - bare, distinct as usize);
    Automaton::heap_of(states)
        + segment_bytes
        + (segments + 1) * size_of::<u32>()
        + segments * size_of::<(u32, u32)>()
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

/// What a sieve is built from: one member and its tail's segments.
pub(crate) struct Item<'a> {
    pub(crate) member: Member,
    pub(crate) segments: Vec<&'a [u8]>,
    pub(crate) anchored: bool,
}

impl Sieve {
    /// Builds the sieve of `items`, the wildcard members of the runs `runs` (ascending by
    /// `top`; a member's `run` is its run's position there).
    pub(crate) fn build(items: Vec<Item<'_>>, runs: Vec<Run>) -> Sieve {
        let mut ids: HashMap<&[u8], u32> = HashMap::new();
        let mut bytes = Vec::new();
        let mut offsets = vec![0u32];
        // Nodes keyed by (parent, segment); the two roots are NONE - 1 (unanchored), NONE - 2.
        let mut node_ids: HashMap<(u32, u32), u32> = HashMap::new();
        let mut parent = Vec::new();
        let mut node_segment = Vec::new();
        let mut at: Vec<(u32, Member)> = Vec::new();
        let mut bare = Vec::new();
        for item in &items {
            if item.segments.is_empty() {
                bare.push(item.member);
                continue;
            }
            let mut node = if item.anchored { NONE - 2 } else { NONE - 1 };
            for seg in item.segments.iter().rev() {
                let next = u32::try_from(offsets.len() - 1).unwrap_or(NONE);
                let id = *ids.entry(seg).or_insert_with(|| {
                    bytes.extend_from_slice(seg);
                    offsets.push(u32::try_from(bytes.len()).unwrap_or(NONE));
                    next
                });
                let next_node = u32::try_from(parent.len()).unwrap_or(NONE);
                node = *node_ids.entry((node, id)).or_insert_with(|| {
                    parent.push(node);
                    node_segment.push(id);
                    next_node
                });
            }
            at.push((node, item.member));
        }
        drop(node_ids);
        let segment_count = offsets.len() - 1;
        let mut roots = vec![(NONE, NONE); segment_count];
        let mut child_of: Vec<(u32, u32)> = Vec::new();
        for (n, &p) in parent.iter().enumerate() {
            let n = n as u32;
            match p {
                p if p == NONE - 1 => roots[node_segment[n as usize] as usize].0 = n,
                p if p == NONE - 2 => roots[node_segment[n as usize] as usize].1 = n,
                p => child_of.push((p, n)),
            }
        }
        child_of.sort_unstable();
        at.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.rank.cmp(&a.1.rank)));
        let mut nodes: Vec<Node> = Vec::with_capacity(node_segment.len() + 1);
        let (mut c, mut m) = (0, 0);
        for (n, &segment) in node_segment.iter().enumerate() {
            let children = c as u32;
            while c < child_of.len() && child_of[c].0 as usize == n {
                c += 1;
            }
            let members = m as u32;
            while m < at.len() && at[m].0 as usize == n {
                m += 1;
            }
            nodes.push(Node {
                segment,
                children,
                members,
                // A node without members of its own takes its best child's below.
                best: if m > members as usize { members } else { NONE },
            });
        }
        nodes.push(Node {
            segment: NONE,
            children: c as u32,
            members: m as u32,
            best: NONE,
        });
        let members: Box<[Member]> = at.into_iter().map(|(_, m)| m).collect();
        let rank = |best: u32| members.get(best as usize).map_or(0, |m: &Member| m.rank);
        // Children were created after their parents: a reverse pass sees every child first.
        for n in (0..node_segment.len()).rev() {
            if parent[n] < NONE - 2 {
                let p = parent[n] as usize;
                if rank(nodes[n].best) > rank(nodes[p].best) {
                    nodes[p].best = nodes[n].best;
                }
            }
        }
        bare.sort_unstable_by_key(|m: &Member| std::cmp::Reverse(m.rank));
        let reversed: Vec<Vec<u8>> = offsets
            .windows(2)
            .map(|w| {
                bytes[w[0] as usize..w[1] as usize]
                    .iter()
                    .rev()
                    .copied()
                    .collect()
            })
            .collect();
        Sieve {
            automaton: Automaton::build(&reversed),
            bytes: bytes.into_boxed_slice(),
            offsets: offsets.into_boxed_slice(),
            roots: roots.into_boxed_slice(),
            nodes: nodes.into_boxed_slice(),
            children: child_of.into_iter().map(|(_, n)| n).collect(),
            members,
            bare: bare.into_boxed_slice(),
            runs: runs.into_boxed_slice(),
        }
    }

    /// Heap bytes this sieve holds.
    #[cfg(test)]
    pub(crate) fn heap_size(&self) -> usize {
        use std::mem::size_of_val;
        self.automaton.heap_size()
            + size_of_val(&*self.bytes)
            + size_of_val(&*self.offsets)
            + size_of_val(&*self.roots)
            + size_of_val(&*self.nodes)
            + size_of_val(&*self.children)
            + size_of_val(&*self.members)
            + size_of_val(&*self.bare)
            + size_of_val(&*self.runs)
    }

    /// Whether the run whose last member is at `run` has members the sieve decides.
    pub(crate) fn decides(&self, run: u32) -> bool {
        self.runs.binary_search_by_key(&run, |r| r.top).is_ok()
    }

    fn segment(&self, id: u32) -> &[u8] {
        let id = id as usize;
        &self.bytes[self.offsets[id] as usize..self.offsets[id + 1] as usize]
    }

    fn segment_len(&self, id: u32) -> usize {
        let id = id as usize;
        (self.offsets[id + 1] - self.offsets[id]) as usize
    }

    fn best_rank(&self, node: Node) -> u64 {
        self.members[node.best as usize].rank
    }

    /// The best member above rank `floor` that matches `path`, among the runs `chain` (those on
    /// the path's chain, ascending).
    pub(crate) fn best(&self, path: &[u8], chain: &[u32], floor: u64) -> Option<Member> {
        let mut found: Option<Member> = None;
        let mut floor = floor;
        let mut offer = |m: &Member, t: usize, floor: &mut u64| -> bool {
            touch();
            if m.rank <= *floor {
                return true;
            }
            let run = self.runs[m.run as usize];
            if run.prefix_len as usize <= t && chain.binary_search(&run.top).is_ok() {
                *floor = m.rank;
                found = Some(*m);
                return true;
            }
            false
        };
        for m in &self.bare {
            if offer(m, path.len(), &mut floor) {
                break;
            }
        }
        SCRATCH.with_borrow_mut(|scratch| {
            self.automaton
                .rightmost(path, self.offsets.len() - 1, scratch);
            let Scratch {
                generation,
                stamp,
                last,
                seen,
                stack,
            } = scratch;
            let len = path.len();
            for &s in seen.iter() {
                let (unanchored, anchored) = self.roots[s as usize];
                let start = last[s as usize] as usize;
                if unanchored != NONE {
                    stack.push((unanchored, start));
                }
                if anchored != NONE && start + self.segment_len(s) == len {
                    stack.push((anchored, start));
                }
            }
            while let Some((n, t)) = stack.pop() {
                let (node, next) = (self.nodes[n as usize], self.nodes[n as usize + 1]);
                touch();
                if self.best_rank(node) <= floor {
                    continue;
                }
                for m in &self.members[node.members as usize..next.members as usize] {
                    if offer(m, t, &mut floor) {
                        break;
                    }
                }
                for &c in &self.children[node.children as usize..next.children as usize] {
                    touch();
                    let child = self.nodes[c as usize];
                    if self.best_rank(child) <= floor {
                        continue;
                    }
                    let s = child.segment as usize;
                    let seg_len = self.segment_len(child.segment);
                    // A segment that does not occur ends its branch.
                    if stamp[s] == *generation {
                        let at = last[s] as usize;
                        let start = if at + seg_len <= t {
                            Some(at)
                        } else {
                            // Its rightmost occurrence ends too late: an earlier one, if any.
                            memchr::memmem::rfind(&path[..t], self.segment(child.segment))
                        };
                        if let Some(start) = start {
                            stack.push((c, start));
                        }
                    }
                }
            }
        });
        found
    }
}

/// A check's working memory, kept per thread: the rightmost occurrence of each segment, stamped
/// with the pass that found it so that nothing is cleared between checks.
#[derive(Default)]
struct Scratch {
    generation: u32,
    stamp: Vec<u32>,
    last: Vec<u32>,
    /// Segments found by this pass.
    seen: Vec<u32>,
    stack: Vec<(u32, usize)>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

/// An Aho–Corasick automaton over the reversed segments: a trie numbered breadth first, so that
/// a state's children are consecutive states and an edge is its target's label; failure links;
/// and for each state the nearest state on its failure chain that ends a segment.
#[derive(Debug, Clone)]
struct Automaton {
    /// Per state: its first child (the children of `s` are `first[s]..first[s + 1]`).
    first: Box<[u32]>,
    /// Per state: the byte of the edge into it (children's labels ascend).
    labels: Box<[u8]>,
    fail: Box<[u32]>,
    /// The segment this state ends, or NONE.
    ends: Box<[u32]>,
    /// The nearest state down the failure chain that ends a segment, or NONE.
    output: Box<[u32]>,
    /// The root's children as a table, since every failure chain ends there (they are states
    /// 1 to 256 at most; 0 for none).
    root: Box<[u16; 256]>,
}

impl Automaton {
    fn build(patterns: &[Vec<u8>]) -> Automaton {
        let mut goto: HashMap<(u32, u8), u32> = HashMap::new();
        let mut trie_ends = vec![NONE];
        for (id, pattern) in patterns.iter().enumerate() {
            let mut state = 0u32;
            for &b in pattern {
                let next = u32::try_from(trie_ends.len()).unwrap_or(NONE);
                state = *goto.entry((state, b)).or_insert_with(|| {
                    trie_ends.push(NONE);
                    next
                });
            }
            trie_ends[state as usize] = id as u32;
        }
        let states = trie_ends.len();
        let mut edges: Vec<(u32, u8, u32)> = goto.iter().map(|(&(s, b), &t)| (s, b, t)).collect();
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
            ends: order.iter().map(|&old| trie_ends[old as usize]).collect(),
            output: vec![NONE; states].into_boxed_slice(),
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
                automaton.output[c as usize] = if automaton.ends[f as usize] != NONE {
                    f
                } else {
                    automaton.output[f as usize]
                };
            }
        }
        automaton
    }

    /// Heap bytes of an automaton of `states` states (a trie: one edge into each but the root).
    fn heap_of(states: usize) -> usize {
        (states + 1) * size_of::<u32>()
            + states * (size_of::<u8>() + 3 * size_of::<u32>())
            + size_of::<[u16; 256]>()
    }

    #[cfg(test)]
    fn heap_size(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(&*self.first)
            + size_of_val(&*self.labels)
            + size_of_val(&*self.fail)
            + size_of_val(&*self.ends)
            + size_of_val(&*self.output)
            + size_of_val(&*self.root)
    }

    #[inline]
    fn next(&self, mut state: u32, byte: u8) -> u32 {
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

    /// Reads `path` backwards and records the start of each segment's rightmost occurrence.
    fn rightmost(&self, path: &[u8], segments: usize, scratch: &mut Scratch) {
        if scratch.stamp.len() < segments {
            scratch.stamp.resize(segments, 0);
            scratch.last.resize(segments, 0);
        }
        scratch.generation = scratch.generation.wrapping_add(1);
        if scratch.generation == 0 {
            scratch.stamp.iter_mut().for_each(|s| *s = 0);
            scratch.generation = 1;
        }
        scratch.seen.clear();
        scratch.stack.clear();
        let generation = scratch.generation;
        let mut state = 0;
        for (i, &byte) in path.iter().enumerate().rev() {
            state = self.next(state, byte);
            let mut out = if self.ends[state as usize] != NONE {
                state
            } else {
                self.output[state as usize]
            };
            while out != NONE {
                let s = self.ends[out as usize] as usize;
                // Seen before, at a later place: so was everything further down its chain.
                if scratch.stamp[s] == generation {
                    break;
                }
                scratch.stamp[s] = generation;
                scratch.last[s] = u32::try_from(i).unwrap_or(NONE);
                scratch.seen.push(s as u32);
                out = self.output[out as usize];
            }
        }
    }
}
