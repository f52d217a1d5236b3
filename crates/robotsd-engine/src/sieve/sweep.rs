//! The trie nodes whose segment occurs only too late, placed by one sweep of the path from its
//! end (issue 58).
//!
//! A node `s·R` is placed at the rightmost start of `s` that ends by `t(R)`. The automaton's
//! pass gives each segment's rightmost occurrence, which settles most nodes at once. A node whose
//! rightmost occurrence ends too late needs an earlier one: searching the path for it, once per
//! node, costs the path's length each time, and a hostile file holds thousands of such nodes
//! (`allow:/*S*z` with every `S` after the path's only `z`: 50 ms a check). Instead such a node
//! is deferred to the latest start it allows, and one sweep from the end of the path to its start
//! places them all: a deferred node is *waiting* on its segment, and at each position the
//! segments that start there (the longest one's output chain, recorded by the pass) place every
//! node waiting on them that may start there. One that may not (its segment turned up before its
//! latest start) is set aside to wait again from that start, where every later find is in time:
//! so a node costs at most three steps, and one whose segment never turns up (most of a hostile
//! file's) one. Since a placed node's children start earlier still, the sweep never turns back.
//!
//! A chain is walked from its longest segment down, and stops at a segment already walked since
//! the last time a segment began to wait: that segment's shorter ones were walked with it, and
//! none of them can have begun to wait since. So the sweep costs the path's length, plus the
//! deferred nodes, plus for each position where a segment began to wait at most one chain (the
//! number of nested segments, each a prefix of the next, bounded by the file's size): see
//! `docs/behaviour.md`, "The cost of a check, whatever the file".

use super::automaton::Automaton;
use super::{Entry, NONE, Scratch};

/// Up to this many segments waiting, each is searched for directly rather than the chains of
/// every position walked.
const FEW: usize = 4;

#[cfg(test)]
thread_local! {
    /// Set by tests to run one way of finding the next position alone: `Some(0)` walks every
    /// position, `Some(usize::MAX)` searches for every waiting segment without a budget.
    pub(super) static FEW_FOR_TESTS: std::cell::Cell<Option<usize>> =
        const { std::cell::Cell::new(None) };
}

fn few() -> usize {
    #[cfg(test)]
    if let Some(few) = FEW_FOR_TESTS.with(|f| f.get()) {
        return few;
    }
    FEW
}

impl Scratch {
    /// Gets ready for a check's sweep over a path of `len` bytes, in a sieve of `segments`
    /// segments.
    pub(super) fn start_sweep(&mut self, len: usize, segments: usize) {
        // Sized here once rather than on each deferral: every list below is by segment.
        if self.waiting.len() < segments {
            self.waiting.resize(segments, NONE);
            self.walked.resize(segments, 0);
            self.found.resize(segments, NONE);
            self.found_in.resize(segments, 0);
        }
        self.entries.clear();
        self.deferred = 0;
        self.waits = 0;
        self.cursor = 0;
        self.path_len = len;
        self.buckets_ready = false;
        self.search_budget = if few() == usize::MAX {
            usize::MAX
        } else {
            2 * len + 64
        };
        self.armed.clear();
        self.began_waiting = false;
        self.begin_epoch();
    }

    fn begin_epoch(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.walked.iter_mut().for_each(|w| *w = 0);
            self.epoch = 1;
        }
    }

    /// Defers `node` (on `segment`'s occurrences) to start at `latest` (before the path's
    /// end) or earlier. It waits on its segment at once, rather than from its position on: most
    /// deferred nodes of a hostile file are never placed, and this way cost one step each. One
    /// whose segment turns up before its position is set aside there ([`Scratch::place`]),
    /// once. The caller counts it ([`Scratch::deferred_up_to`]).
    #[inline]
    pub(super) fn defer(&mut self, node: u32, segment: u32, latest: u32) {
        let entry = u32::try_from(self.entries.len()).unwrap_or(NONE);
        let next = self.wait(segment as usize, entry);
        self.entries.push(Entry {
            node,
            segment,
            latest,
            next,
        });
    }

    /// Counts `count` nodes deferred, the latest of them to `latest`: once for a node's
    /// children, out of their loop.
    #[inline]
    pub(super) fn deferred_up_to(&mut self, count: usize, latest: usize) {
        self.deferred += count;
        self.cursor = self.cursor.max(latest.min(self.path_len));
    }

    /// Puts `entry` first on `s`'s wait list, and returns the one it goes before.
    #[inline]
    fn wait(&mut self, s: usize, entry: u32) -> u32 {
        let waiting = std::mem::replace(&mut self.waiting[s], entry);
        if waiting == NONE {
            self.armed.push(s as u32);
            self.waits += 1;
            // A walk that stopped short of this segment must not stop there again: the next
            // walk begins an epoch.
            self.began_waiting = true;
        }
        waiting
    }

    /// First node set aside in this check: the buckets of every position start empty. Not
    /// before, since most checks set none aside and the buckets are as long as the path.
    #[cold]
    fn ready_buckets(&mut self) {
        self.bucket.clear();
        self.bucket.resize(self.path_len + 1, NONE);
        self.buckets_ready = true;
    }

    /// Moves the sweep to the next position with deferred nodes, arms them, and puts every
    /// node placed there on the stack with its start. False when no deferred node is left.
    pub(super) fn advance<'a>(
        &mut self,
        path: &[u8],
        automaton: &Automaton,
        segment: impl Fn(u32) -> &'a [u8],
    ) -> bool {
        while self.deferred > 0 {
            let i = self.next_position(path, &segment);
            // The nodes set aside for this position wait on their segments again from here.
            let mut entry = if self.buckets_ready {
                std::mem::replace(&mut self.bucket[i], NONE)
            } else {
                NONE
            };
            while entry != NONE {
                let Entry { segment, next, .. } = self.entries[entry as usize];
                self.entries[entry as usize].next = self.wait(segment as usize, entry);
                entry = next;
                super::touch();
            }
            let mut placed = false;
            if self.waits > 0 {
                if std::mem::take(&mut self.began_waiting) {
                    self.begin_epoch();
                }
                let mut state = self.longest.get(i).copied().unwrap_or(NONE);
                while state != NONE {
                    super::touch();
                    let s = automaton.segment_of(state) as usize;
                    if self.walked[s] == self.epoch {
                        break;
                    }
                    self.walked[s] = self.epoch;
                    placed |= self.place(s, i);
                    state = automaton.shorter(state);
                }
            }
            if i == 0 {
                // What still waits occurs nowhere early enough.
                self.deferred = 0;
            } else {
                self.cursor = i - 1;
            }
            if placed {
                return true;
            }
        }
        false
    }

    /// Puts the nodes waiting on segment `s` that may start at `i` on the stack, starting
    /// there, and sets the others aside for their own position (a node is set aside at most
    /// once: it waits again only from there, where every start the sweep meets is early
    /// enough); whether any was placed.
    fn place(&mut self, s: usize, i: usize) -> bool {
        let mut entry = std::mem::replace(&mut self.waiting[s], NONE);
        if entry == NONE {
            return false;
        }
        self.waits -= 1;
        let mut placed = false;
        let start = u32::try_from(i).unwrap_or(NONE);
        while entry != NONE {
            let Entry {
                node, latest, next, ..
            } = self.entries[entry as usize];
            if latest >= start {
                self.stack.push((node, start));
                self.deferred -= 1;
                placed = true;
            } else {
                if !self.buckets_ready {
                    self.ready_buckets();
                }
                let bucket = &mut self.bucket[latest as usize];
                self.entries[entry as usize].next = *bucket;
                *bucket = entry;
            }
            entry = next;
        }
        placed
    }

    /// The next position the sweep must look at, from its cursor down: the next with deferred
    /// nodes to arm, or where a waiting segment may start. With few segments waiting, each is
    /// searched for directly (within a budget of twice the path), and the positions where none
    /// of them starts are skipped; otherwise every position is.
    fn next_position<'a>(&mut self, path: &[u8], segment: &impl Fn(u32) -> &'a [u8]) -> usize {
        let from = self.cursor;
        if self.waits > few() || (self.waits > 0 && self.search_budget == 0) {
            return from;
        }
        // The latest start of a waiting segment, each searched for once per arming.
        let mut target: Option<usize> = None;
        let mut k = 0;
        while k < self.armed.len() {
            let s = self.armed[k] as usize;
            if self.waiting[s] == NONE {
                self.armed.swap_remove(k);
                continue;
            }
            // A search's answer holds for this check until the sweep passes it: none before a
            // position is none before any earlier one.
            let known = self.found_in[s] == self.generation
                && (self.found[s] == NONE || self.found[s] as usize <= from);
            if !known {
                let bytes = segment(s as u32);
                let end = (from + bytes.len()).min(path.len());
                let at = memchr::memmem::rfind(&path[..end], bytes);
                self.search_budget = self.search_budget.saturating_sub(end - at.unwrap_or(0));
                self.found[s] = at.map_or(NONE, |at| u32::try_from(at).unwrap_or(NONE));
                self.found_in[s] = self.generation;
            }
            match self.found[s] {
                NONE => {
                    // It starts nowhere early enough: its nodes are never placed.
                    let mut entry = std::mem::replace(&mut self.waiting[s], NONE);
                    self.waits -= 1;
                    while entry != NONE {
                        entry = self.entries[entry as usize].next;
                        self.deferred -= 1;
                    }
                    self.armed.swap_remove(k);
                    continue;
                }
                at => target = target.max(Some(at as usize)),
            }
            k += 1;
        }
        // The next bucket with nodes to arm, down to the target.
        let floor = target.unwrap_or(0);
        let mut i = from;
        if !self.buckets_ready {
            return floor;
        }
        while i > floor && self.bucket[i] == NONE {
            i -= 1;
        }
        i
    }
    /// Leaves no segment waiting for the next check.
    pub(super) fn end_sweep(&mut self) {
        for s in self.armed.drain(..) {
            self.waiting[s as usize] = NONE;
        }
    }
}
