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
use std::collections::HashMap;

/// No such state, node or segment.
const NONE: u32 = u32::MAX;

/// A rule decided by the sieve, as the index ranks it (see [`rank`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Member {
    /// Precedence: greater wins.
    pub(crate) rank: u64,
    /// The index's rule id (with its derived flag).
    pub(crate) rule: u32,
    /// Its literal prefix's length: the path must have its tail start there or later.
    pub(crate) prefix_len: u32,
    /// The run it belongs to (the index position of the run's last member): it is a candidate
    /// only when that run is on the path's chain.
    pub(crate) run: u32,
}

/// Orders rules as the index does (longest pattern, then `allow`, then the earliest line) in one
/// integer, so that a subtree's best can be kept in eight bytes.
pub(crate) fn rank(priority: u32, allow: bool, line: u32) -> u64 {
    (u64::from(priority) << 32)
        | (u64::from(allow) << 31)
        | u64::from(0x7FFF_FFFF - (line & 0x7FFF_FFFF))
}

/// A node of the trie of tails read from the right: the sequence of its own segment followed by
/// its parent's.
#[derive(Debug, Clone, Copy)]
struct Node {
    segment: u32,
    /// Children in `children`, members in `members` (best first).
    children: (u32, u32),
    members: (u32, u32),
    /// The best rank in the subtree.
    best: u64,
}

/// The sieve of one set's large runs.
#[derive(Debug, Clone)]
pub(crate) struct Sieve {
    automaton: Automaton,
    /// Segment bytes, and each segment's range of them.
    bytes: Box<[u8]>,
    segments: Box<[(u32, u32)]>,
    /// By segment: the trie's first-level nodes ending with it, unanchored and anchored.
    roots: Box<[(u32, u32)]>,
    nodes: Box<[Node]>,
    children: Box<[u32]>,
    members: Box<[Member]>,
    /// Members whose tail is all `*`: they match whatever follows their prefix.
    bare: Box<[Member]>,
    /// The runs whose wildcard members the sieve decides, ascending.
    runs: Box<[u32]>,
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

/// Heap bytes of a sieve over `rules` wildcard rules whose tails hold `tail_bytes` bytes, at
/// most: charged before it is built, so that a parsed file's weight never grows.
pub(crate) fn heap_bound(rules: usize, tail_bytes: usize) -> usize {
    // Per tail byte at most: a segment byte, an automaton state (16) and its edge (5), a
    // segment's range and roots (16), a trie node (32) and a child (4); per rule a member (24)
    // and a run (4); the root's table and one more edge start.
    2048 + tail_bytes * (1 + 21 + 16 + 32 + 4) + rules * (24 + 4)
}

/// What a sieve is built from: one member and its tail's segments.
pub(crate) struct Item<'a> {
    pub(crate) member: Member,
    pub(crate) segments: Vec<&'a [u8]>,
    pub(crate) anchored: bool,
}

impl Sieve {
    /// Builds the sieve of `items`, the wildcard members of the runs `runs` (ascending).
    pub(crate) fn build(items: Vec<Item<'_>>, runs: Vec<u32>) -> Sieve {
        let mut ids: HashMap<&[u8], u32> = HashMap::new();
        let mut bytes = Vec::new();
        let mut segments = Vec::new();
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
                let next = u32::try_from(segments.len()).unwrap_or(NONE);
                let id = *ids.entry(seg).or_insert_with(|| {
                    let start = u32::try_from(bytes.len()).unwrap_or(NONE);
                    bytes.extend_from_slice(seg);
                    segments.push((start, u32::try_from(seg.len()).unwrap_or(NONE)));
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
        let mut roots = vec![(NONE, NONE); segments.len()];
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
        let mut nodes: Vec<Node> = node_segment
            .iter()
            .map(|&segment| Node {
                segment,
                children: (0, 0),
                members: (0, 0),
                best: 0,
            })
            .collect();
        let (mut c, mut m) = (0, 0);
        for (n, node) in nodes.iter_mut().enumerate() {
            let start = c;
            while c < child_of.len() && child_of[c].0 as usize == n {
                c += 1;
            }
            node.children = (start as u32, c as u32);
            let start = m;
            while m < at.len() && at[m].0 as usize == n {
                m += 1;
            }
            node.members = (start as u32, m as u32);
            node.best = at.get(start).filter(|_| m > start).map_or(0, |a| a.1.rank);
        }
        // Children were created after their parents: a reverse pass sees every child first.
        for n in (0..nodes.len()).rev() {
            if parent[n] < NONE - 2 {
                let p = parent[n] as usize;
                nodes[p].best = nodes[p].best.max(nodes[n].best);
            }
        }
        bare.sort_unstable_by_key(|m: &Member| std::cmp::Reverse(m.rank));
        let reversed: Vec<Vec<u8>> = segments
            .iter()
            .map(|&(s, l)| {
                bytes[s as usize..(s + l) as usize]
                    .iter()
                    .rev()
                    .copied()
                    .collect()
            })
            .collect();
        Sieve {
            automaton: Automaton::build(&reversed),
            bytes: bytes.into_boxed_slice(),
            segments: segments.into_boxed_slice(),
            roots: roots.into_boxed_slice(),
            nodes: nodes.into_boxed_slice(),
            children: child_of.into_iter().map(|(_, n)| n).collect(),
            members: at.into_iter().map(|(_, m)| m).collect(),
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
            + size_of_val(&*self.segments)
            + size_of_val(&*self.roots)
            + size_of_val(&*self.nodes)
            + size_of_val(&*self.children)
            + size_of_val(&*self.members)
            + size_of_val(&*self.bare)
            + size_of_val(&*self.runs)
    }

    /// Whether the run whose last member is at `run` has members the sieve decides.
    pub(crate) fn decides(&self, run: u32) -> bool {
        self.runs.binary_search(&run).is_ok()
    }

    fn segment(&self, id: u32) -> &[u8] {
        let (start, len) = self.segments[id as usize];
        &self.bytes[start as usize..(start + len) as usize]
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
            if m.prefix_len as usize <= t && chain.binary_search(&m.run).is_ok() {
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
            self.automaton.rightmost(path, self.segments.len(), scratch);
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
                if anchored != NONE && start + self.segments[s as usize].1 as usize == len {
                    stack.push((anchored, start));
                }
            }
            while let Some((n, t)) = stack.pop() {
                let node = self.nodes[n as usize];
                touch();
                if node.best <= floor {
                    continue;
                }
                for m in &self.members[node.members.0 as usize..node.members.1 as usize] {
                    if offer(m, t, &mut floor) {
                        break;
                    }
                }
                for &c in &self.children[node.children.0 as usize..node.children.1 as usize] {
                    touch();
                    let child = self.nodes[c as usize];
                    if child.best <= floor {
                        continue;
                    }
                    let s = child.segment as usize;
                    let seg_len = self.segments[s].1 as usize;
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

/// An Aho–Corasick automaton over the reversed segments: goto edges sorted per state, failure
/// links, and for each state the nearest state on its failure chain that ends a segment.
#[derive(Debug, Clone)]
struct Automaton {
    /// Per state: first edge (edges of state `s` are `edges[s]..edges[s + 1]`).
    edges: Box<[u32]>,
    labels: Box<[u8]>,
    targets: Box<[u32]>,
    fail: Box<[u32]>,
    /// The segment this state ends, or NONE.
    ends: Box<[u32]>,
    /// The nearest state down the failure chain that ends a segment, or NONE.
    output: Box<[u32]>,
    /// The root's edges as a table, since every failure chain ends there.
    root: Box<[u32; 256]>,
}

impl Automaton {
    fn build(patterns: &[Vec<u8>]) -> Automaton {
        let mut goto: HashMap<(u32, u8), u32> = HashMap::new();
        let mut ends = vec![NONE];
        for (id, pattern) in patterns.iter().enumerate() {
            let mut state = 0u32;
            for &b in pattern {
                let next = u32::try_from(ends.len()).unwrap_or(NONE);
                state = *goto.entry((state, b)).or_insert_with(|| {
                    ends.push(NONE);
                    next
                });
            }
            ends[state as usize] = id as u32;
        }
        let states = ends.len();
        let mut sorted: Vec<(u32, u8, u32)> = goto.iter().map(|(&(s, b), &t)| (s, b, t)).collect();
        sorted.sort_unstable();
        let mut edges = vec![0u32; states + 1];
        for &(s, _, _) in &sorted {
            edges[s as usize + 1] += 1;
        }
        for s in 0..states {
            edges[s + 1] += edges[s];
        }
        let labels: Box<[u8]> = sorted.iter().map(|e| e.1).collect();
        let targets: Box<[u32]> = sorted.iter().map(|e| e.2).collect();
        let mut root = Box::new([0u32; 256]);
        for e in edges[0] as usize..edges[1] as usize {
            root[labels[e] as usize] = targets[e];
        }
        let mut automaton = Automaton {
            edges: edges.into_boxed_slice(),
            labels,
            targets,
            fail: vec![0; states].into_boxed_slice(),
            ends: ends.into_boxed_slice(),
            output: vec![NONE; states].into_boxed_slice(),
            root,
        };
        // Breadth first, so that a state's failure target is finished before the state.
        let mut queue = std::collections::VecDeque::from([0u32]);
        while let Some(s) = queue.pop_front() {
            for e in automaton.edges[s as usize] as usize..automaton.edges[s as usize + 1] as usize
            {
                let (b, t) = (automaton.labels[e], automaton.targets[e]);
                let f = if s == 0 {
                    0
                } else {
                    automaton.next(automaton.fail[s as usize], b)
                };
                automaton.fail[t as usize] = f;
                automaton.output[t as usize] = if automaton.ends[f as usize] != NONE {
                    f
                } else {
                    automaton.output[f as usize]
                };
                queue.push_back(t);
            }
        }
        automaton
    }

    #[cfg(test)]
    fn heap_size(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(&*self.edges)
            + size_of_val(&*self.labels)
            + size_of_val(&*self.targets)
            + size_of_val(&*self.fail)
            + size_of_val(&*self.ends)
            + size_of_val(&*self.output)
            + size_of_val(&*self.root)
    }

    #[inline]
    fn next(&self, mut state: u32, byte: u8) -> u32 {
        loop {
            if state == 0 {
                return self.root[byte as usize];
            }
            let (a, b) = (
                self.edges[state as usize] as usize,
                self.edges[state as usize + 1] as usize,
            );
            if let Ok(i) = self.labels[a..b].binary_search(&byte) {
                return self.targets[a + i];
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
