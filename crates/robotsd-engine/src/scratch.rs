//! The per-thread working memory of [`RobotsTxt::parse`](crate::RobotsTxt::parse): the growable
//! buffers a parse fills and the table that finds repeated patterns.
//!
//! Most robots.txt files are small, and their parse cost was dominated by allocation. Keeping
//! these buffers per thread between parses means a parse allocates only the exact-size slices of
//! its result. Buffers that grew past [`MAX_KEPT_SCRATCH_BYTES`] are dropped, so a thread that
//! once parsed a large file does not hold its memory forever.

use super::data::{AgentLineData, CrawlDelay, DiagnosticData, GroupData, RuleData, Span};

/// The growable buffers a parse fills. They are kept per thread between parses, so that a parse
/// allocates only the exact-size slices of its result instead of regrowing a dozen vectors:
/// most robots.txt files are small, and their parse cost was dominated by allocation.
#[derive(Default)]
pub(crate) struct Scratch {
    pub(crate) arena: Vec<u8>,
    pub(crate) rules: Vec<RuleData>,
    pub(crate) agent_lines: Vec<AgentLineData>,
    pub(crate) groups: Vec<GroupData>,
    pub(crate) sitemaps: Vec<(Span, u32)>,
    pub(crate) licenses: Vec<(Span, u32)>,
    /// Sparse, by group id: few groups have one.
    pub(crate) crawl_delays: Vec<(u32, CrawlDelay)>,
    /// Sparse, by rule id: the rules whose written value differs from the pattern.
    pub(crate) rewritten: Vec<(u32, u32)>,
    /// Sparse, by rule id: the rules whose pattern changes in RFC 9309's form, each with that
    /// form (in the arena) and its length for precedence.
    pub(crate) rfc_forms: Vec<(u32, RuleData, u16)>,
    pub(crate) diagnostics: Vec<DiagnosticData>,
    /// Where each distinct pattern is in the arena.
    pub(crate) patterns: PatternTable,
}

/// One step of the Fx hash: folds eight bytes into `hash` with one multiply. A pattern's hash
/// (`robots_txt::values::scan_value`) is its length folded with each of its words, the last one
/// zero-padded: good enough to find repeated patterns within one file, and collisions are
/// checked.
// `#[inline]`: called per word of each rule from the parser in another module, which release
// builds compile in another codegen unit.
#[inline]
pub(crate) fn fx_step(hash: u64, word: u64) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    (hash.rotate_left(5) ^ word).wrapping_mul(K)
}

/// An open-addressing table from pattern hash to arena offset, for sharing repeated patterns.
///
/// Slots carry the generation (parse) that wrote them, so that starting a new parse is O(1)
/// instead of clearing the table; a general-purpose hash map cost a sixth of the parse time.
#[derive(Default)]
pub(crate) struct PatternTable {
    /// (generation, arena offset, hash); a slot whose generation is not the current one is free.
    slots: Vec<(u32, u32, u64)>,
    generation: u32,
    len: usize,
}

impl PatternTable {
    fn reset(&mut self) {
        self.len = 0;
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            // Generations wrapped: old slots could look current again.
            self.slots.iter_mut().for_each(|slot| slot.0 = 0);
            self.generation = 1;
        }
    }

    #[inline]
    fn home(&self, hash: u64) -> usize {
        // The high half: `fx_step` ends with a multiply, which mixes into the high bits.
        (hash >> 32) as usize & (self.slots.len() - 1)
    }

    /// The offset stored for `hash`, or `offset` after storing it.
    #[inline]
    pub(crate) fn get_or_insert(&mut self, hash: u64, offset: u32) -> u32 {
        if self.len * 2 >= self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(hash);
        loop {
            let slot = &mut self.slots[i];
            if slot.0 != self.generation {
                *slot = (self.generation, offset, hash);
                self.len += 1;
                return offset;
            }
            if slot.2 == hash {
                return slot.1;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = vec![(0, 0, 0); (old.len() * 2).max(64)];
        self.generation = self.generation.max(1);
        let mask = self.slots.len() - 1;
        for slot in old {
            if slot.0 != self.generation {
                continue;
            }
            let mut i = self.home(slot.2);
            while self.slots[i].0 == self.generation {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot;
        }
    }

    fn capacity_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<(u32, u32, u64)>()
    }
}

/// Buffers larger than this are not kept for the next parse (a thread that once parsed a large
/// file does not hold its memory forever).
pub(crate) const MAX_KEPT_SCRATCH_BYTES: usize = 4 * 1024 * 1024;

impl Scratch {
    fn clear(&mut self) {
        self.arena.clear();
        self.rules.clear();
        self.agent_lines.clear();
        self.groups.clear();
        self.sitemaps.clear();
        self.licenses.clear();
        self.crawl_delays.clear();
        self.rewritten.clear();
        self.rfc_forms.clear();
        self.diagnostics.clear();
        self.patterns.reset();
    }

    fn capacity_bytes(&self) -> usize {
        use std::mem::size_of;
        self.arena.capacity()
            + self.rules.capacity() * size_of::<RuleData>()
            + self.agent_lines.capacity() * size_of::<AgentLineData>()
            + self.groups.capacity() * size_of::<GroupData>()
            + self.sitemaps.capacity() * size_of::<(Span, u32)>()
            + self.licenses.capacity() * size_of::<(Span, u32)>()
            + self.crawl_delays.capacity() * size_of::<(u32, CrawlDelay)>()
            + self.rewritten.capacity() * size_of::<(u32, u32)>()
            + self.rfc_forms.capacity() * size_of::<(u32, RuleData, u16)>()
            + self.patterns.capacity_bytes()
            + self.diagnostics.capacity() * size_of::<DiagnosticData>()
    }
}

thread_local! {
    static SCRATCH: std::cell::Cell<Option<Box<Scratch>>> = const { std::cell::Cell::new(None) };
}

/// The thread's buffers, cleared, or new ones on the thread's first parse.
pub(crate) fn take() -> Box<Scratch> {
    let mut scratch = SCRATCH.take().unwrap_or_default();
    scratch.clear();
    scratch
}

/// Keeps `scratch` for the thread's next parse, unless it grew too large to hold on to.
pub(crate) fn give_back(scratch: Box<Scratch>) {
    if scratch.capacity_bytes() <= MAX_KEPT_SCRATCH_BYTES {
        SCRATCH.set(Some(scratch));
    }
}
