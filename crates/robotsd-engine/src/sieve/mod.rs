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

mod automaton;
mod count;
mod sweep;

use std::cell::RefCell;
use std::collections::HashMap;

use automaton::Automaton;
pub(crate) use count::heap_of;

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
    /// By segment, for those that end a tail (ids below this slice's length): the trie's
    /// first-level nodes ending with it, unanchored and anchored.
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

/// What a sieve is built from: one member and its tail's segments.
pub(crate) struct Item<'a> {
    pub(crate) member: Member,
    pub(crate) segments: Vec<&'a [u8]>,
    pub(crate) anchored: bool,
}

impl Sieve {
    /// Builds the sieve of `items`, the wildcard members of the runs `runs` (ascending by
    /// `top`; a member's `run` is its run's position there).
    pub(crate) fn build<'a>(items: Vec<Item<'a>>, runs: Vec<Run>) -> Sieve {
        let mut ids: HashMap<&[u8], u32> = HashMap::new();
        let mut bytes = Vec::new();
        let mut offsets = vec![0u32];
        // Nodes keyed by (parent, segment); the two roots are NONE - 1 (unanchored), NONE - 2.
        // The segments that end a tail take the first ids, so that the pass records only those,
        // the ones that start a walk (`Sieve::roots`), and a check reads no others to start.
        let mut intern = |ids: &mut HashMap<&'a [u8], u32>, seg: &'a [u8]| -> u32 {
            let next = u32::try_from(offsets.len() - 1).unwrap_or(NONE);
            *ids.entry(seg).or_insert_with(|| {
                bytes.extend_from_slice(seg);
                offsets.push(u32::try_from(bytes.len()).unwrap_or(NONE));
                next
            })
        };
        for item in &items {
            if let Some(last) = item.segments.last() {
                intern(&mut ids, last);
            }
        }
        let rooted = ids.len();
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
                let id = intern(&mut ids, seg);
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
        let mut roots = vec![(NONE, NONE); rooted];
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

    /// Settles the children of a node placed at `t`: each whose best rule could beat `floor` is
    /// placed at its segment's rightmost occurrence when that ends by `t`, or deferred to the
    /// sweep when it ends later. The hot loop of a hostile file (tens of thousands of children
    /// under one node), so it reads each child's node and occurrence once.
    #[inline]
    fn enter(&self, children: &[u32], t: usize, floor: u64, scratch: &mut Scratch) {
        let generation = scratch.generation;
        let (mut deferred, mut latest_of_all) = (0, 0);
        for &c in children {
            touch();
            let child = self.nodes[c as usize];
            // With no match yet (a floor of 0) a rank prunes next to nothing: its best is not
            // read (`offer` weighs every member's own).
            if floor > 0 && self.best_rank(child) <= floor {
                continue;
            }
            let s = child.segment;
            let (stamp, at) = scratch.occurs[s as usize];
            // A segment that does not occur ends its branch.
            if stamp != generation {
                continue;
            }
            let seg_len = self.segment_len(s);
            if at as usize + seg_len <= t {
                scratch.stack.push((c, at));
            } else if let Some(latest) = t.checked_sub(seg_len) {
                // Its rightmost occurrence ends too late: the sweep finds the latest one that
                // ends in time, if any.
                scratch.defer(c, s, latest as u32);
                deferred += 1;
                latest_of_all = latest_of_all.max(latest);
            }
        }
        if deferred > 0 {
            scratch.deferred_up_to(deferred, latest_of_all);
        }
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
        let segments = self.offsets.len() - 1;
        SCRATCH.with_borrow_mut(|scratch| {
            self.automaton
                .rightmost(path, segments, self.roots.len(), scratch);
            scratch.start_sweep(path.len(), segments);
            let len = path.len();
            for k in 0..scratch.seen.len() {
                let s = scratch.seen[k];
                let (unanchored, anchored) = self.roots[s as usize];
                let start = scratch.occurs[s as usize].1;
                if unanchored != NONE {
                    scratch.stack.push((unanchored, start));
                }
                if anchored != NONE && start as usize + self.segment_len(s) == len {
                    scratch.stack.push((anchored, start));
                }
            }
            loop {
                while let Some((n, t)) = scratch.stack.pop() {
                    let (node, next) = (self.nodes[n as usize], self.nodes[n as usize + 1]);
                    touch();
                    if self.best_rank(node) <= floor {
                        continue;
                    }
                    let t = t as usize;
                    for m in &self.members[node.members as usize..next.members as usize] {
                        if offer(m, t, &mut floor) {
                            break;
                        }
                    }
                    let children = &self.children[node.children as usize..next.children as usize];
                    self.enter(children, t, floor, scratch);
                }
                if !scratch.advance(path, &self.automaton, |s| self.segment(s)) {
                    break;
                }
            }
            scratch.end_sweep();
        });
        found
    }
}

/// A check's working memory, kept per thread: the rightmost occurrence of each segment, stamped
/// with the pass that found it so that nothing is cleared between checks.
#[derive(Default)]
struct Scratch {
    generation: u32,
    /// By segment: the generation of the pass that last found it, and the start of its
    /// rightmost occurrence in that pass (together, since the hot loop reads both).
    occurs: Vec<(u32, u32)>,
    /// Segments found by this pass that end a tail (see `Sieve::roots`).
    seen: Vec<u32>,
    /// Trie nodes placed and not yet looked at, with the start of their segment.
    stack: Vec<(u32, u32)>,
    /// By path position: the state of the longest segment that starts there, or NONE.
    longest: Vec<u32>,
    /// The sweep (`sweep.rs`): by position, the first entry set aside to wait again from there;
    /// entries are lists of deferred nodes, on their segment's wait list or in a position's
    /// bucket.
    bucket: Vec<u32>,
    buckets_ready: bool,
    entries: Vec<Entry>,
    /// By segment: its first waiting entry, or NONE; and the epoch it was last walked in.
    waiting: Vec<u32>,
    walked: Vec<u32>,
    /// Segments that began to wait in this check, to leave none waiting for the next.
    armed: Vec<u32>,
    /// Whether a segment began to wait since the sweep's last walk.
    began_waiting: bool,
    /// By segment: the start of its rightmost occurrence at or before a position the sweep
    /// searched from (NONE for none), valid in the check whose generation is `found_in`.
    found: Vec<u32>,
    found_in: Vec<u32>,
    /// Bytes the direct searches may still read in this check.
    search_budget: usize,
    epoch: u32,
    /// Deferred nodes not yet placed or given up, and segments waiting now.
    deferred: usize,
    waits: usize,
    /// The next position the sweep looks at, and the path's length.
    cursor: usize,
    path_len: usize,
}

/// A deferred node on a list of the sweep: its segment's wait list, or its position's bucket
/// when its segment turned up too early.
#[derive(Debug, Clone, Copy)]
struct Entry {
    node: u32,
    /// The node's segment, kept here so that arming it does not read the trie.
    segment: u32,
    /// The latest start it may take.
    latest: u32,
    next: u32,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

#[cfg(test)]
mod tests;
