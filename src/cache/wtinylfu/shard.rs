//! One shard of the cache: one hash table over a slab of entries, each entry on one of three
//! lists (least recently used at the head), and the policy that moves entries between them.

use hashbrown::HashTable;

use super::sketch::Sketch;

/// No entry: the end of a list, or of the free list.
const NIL: u32 = u32::MAX;

/// Which list an entry is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Region {
    /// Weighed; new values start here.
    Window,
    /// Weighed; entered from the window by admission.
    Main,
    /// Bounded by count, not weighed against the capacity: entries without a value to weigh,
    /// each with what it still holds as its weight.
    Resting,
}

impl Region {
    fn index(self) -> usize {
        self as usize
    }
}

/// What becomes of an entry evicted to make room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// It moves to the resting list, holding this many bytes there.
    Rest(u32),
    /// It is forgotten.
    Forget,
}

#[derive(Debug)]
struct Node<V> {
    /// `None` while the node is free.
    value: Option<V>,
    hash: u64,
    weight: u32,
    region: Region,
    prev: u32,
    /// The next node on its list, or on the free list.
    next: u32,
}

#[derive(Clone, Copy, Debug)]
struct List {
    head: u32,
    tail: u32,
    len: usize,
    bytes: u64,
}

impl List {
    const EMPTY: List = List {
        head: NIL,
        tail: NIL,
        len: 0,
        bytes: 0,
    };
}

/// What one entry costs the table beside its value's own heap: its node in the slab and its
/// slot in the hash table, each grown by doubling, so on average half as much again as used.
pub fn entry_bytes<V>() -> usize {
    (std::mem::size_of::<Node<V>>() + std::mem::size_of::<u32>() + 1) * 3 / 2
}

/// The limits of one shard.
#[derive(Clone, Copy, Debug)]
pub(super) struct Limits {
    pub(super) window_bytes: u64,
    pub(super) main_bytes: u64,
    pub(super) resting: usize,
}

/// One shard's entries and their policy.
#[derive(Debug)]
pub(super) struct Shard<V> {
    table: HashTable<u32>,
    nodes: Vec<Node<V>>,
    free: u32,
    lists: [List; 3],
    limits: Limits,
    pub(super) sketch: Sketch,
}

fn index(i: u32) -> usize {
    usize::try_from(i).unwrap_or(usize::MAX)
}

impl<V> Shard<V> {
    pub(super) fn new(limits: Limits, sketch: Sketch) -> Shard<V> {
        Shard {
            table: HashTable::new(),
            nodes: Vec::new(),
            free: NIL,
            lists: [List::EMPTY; 3],
            limits,
            sketch,
        }
    }

    /// The entry whose value `is_key` accepts among those with `hash`.
    pub(super) fn find(&self, hash: u64, is_key: impl Fn(&V) -> bool) -> Option<u32> {
        let nodes = &self.nodes;
        self.table
            .find(hash, |&i| {
                nodes[index(i)].value.as_ref().is_some_and(&is_key)
            })
            .copied()
    }

    pub(super) fn value(&self, i: u32) -> &V {
        match &self.nodes[index(i)].value {
            Some(value) => value,
            None => unreachable!("a free node is in the table"),
        }
    }

    pub(super) fn region(&self, i: u32) -> Region {
        self.nodes[index(i)].region
    }

    pub(super) fn values(&self) -> impl Iterator<Item = &V> {
        self.nodes.iter().filter_map(|node| node.value.as_ref())
    }

    /// Entries and bytes held in the window and main lists.
    pub(super) fn weighed(&self) -> (u64, u64) {
        let [window, main, _] = self.lists;
        let len = u64::try_from(window.len + main.len).unwrap_or(u64::MAX);
        (len, window.bytes + main.bytes)
    }

    /// Entries and bytes held on the resting list.
    pub(super) fn resting(&self) -> (u64, u64) {
        let resting = self.lists[Region::Resting.index()];
        (
            u64::try_from(resting.len).unwrap_or(u64::MAX),
            resting.bytes,
        )
    }

    /// Moves the entry to the most recent end of its list.
    pub(super) fn touch(&mut self, i: u32) {
        let region = self.region(i);
        if self.lists[region.index()].tail != i {
            self.unlink(i);
            self.push(region, i);
        }
    }

    /// A new entry, most recent on `region`'s list.
    pub(super) fn insert(&mut self, hash: u64, value: V, weight: u32, region: Region) -> u32 {
        let node = Node {
            value: Some(value),
            hash,
            weight,
            region,
            prev: NIL,
            next: NIL,
        };
        let i = if self.free == NIL {
            self.nodes.push(node);
            u32::try_from(self.nodes.len() - 1).expect("fewer than 2^32 entries per shard")
        } else {
            let i = self.free;
            self.free = self.nodes[index(i)].next;
            self.nodes[index(i)] = node;
            i
        };
        let nodes = &self.nodes;
        self.table.insert_unique(hash, i, |&j| nodes[index(j)].hash);
        self.push(region, i);
        i
    }

    /// Replaces the entry's value, and its weight.
    pub(super) fn replace(&mut self, i: u32, value: V, weight: u32) {
        let region = self.region(i);
        let node = &mut self.nodes[index(i)];
        node.value = Some(value);
        let list = &mut self.lists[region.index()];
        list.bytes = list.bytes - u64::from(node.weight) + u64::from(weight);
        node.weight = weight;
    }

    /// Moves the entry to the most recent end of `region`'s list.
    pub(super) fn move_to(&mut self, i: u32, region: Region) {
        self.unlink(i);
        self.nodes[index(i)].region = region;
        self.push(region, i);
    }

    /// Evicts, admits and forgets until every list is within its limit. `fate` says what
    /// becomes of an entry evicted from the window or the main list.
    pub(super) fn enforce(&mut self, fate: impl Fn(&V) -> Fate) {
        while self.lists[Region::Window.index()].bytes > self.limits.window_bytes {
            let candidate = self.lists[Region::Window.index()].head;
            if self.admit(candidate, &fate) {
                self.move_to(candidate, Region::Main);
            } else {
                self.evict(candidate, &fate);
            }
        }
        // An entry of the main list may have grown.
        while self.lists[Region::Main.index()].bytes > self.limits.main_bytes {
            let victim = self.lists[Region::Main.index()].head;
            self.evict(victim, &fate);
        }
        while self.lists[Region::Resting.index()].len > self.limits.resting {
            let oldest = self.lists[Region::Resting.index()].head;
            self.remove(oldest);
        }
    }

    /// Whether the window's least recent entry may enter the main list, evicting there what it
    /// wins against: room to spare, or more uses than all the entries it would displace
    /// together, least recent first (TinyLFU's admission, as moka applies it to weights).
    fn admit(&mut self, candidate: u32, fate: &impl Fn(&V) -> Fate) -> bool {
        let weight = u64::from(self.nodes[index(candidate)].weight);
        if weight > self.limits.main_bytes {
            return false;
        }
        let main = self.lists[Region::Main.index()];
        let room = self.limits.main_bytes.saturating_sub(main.bytes);
        if weight <= room {
            return true;
        }
        let wanted = u32::from(self.sketch.frequency(self.nodes[index(candidate)].hash));
        // A tie keeps the entries in place, so that keys named once never displace each other
        // into the main list; but counters stop at 15, and a candidate there ties with any
        // entry once used as often, however long ago: a site checked ten times a second was
        // refused for a minute behind sites checked 16 times before it (issue 58). It was used
        // that often within the window's time, so a saturated candidate wins the tie.
        let saturated = u64::from(wanted) == super::sketch::MAX_COUNT;
        let loses = |uses: u32| wanted < uses || (wanted == uses && !saturated);
        let (mut freed, mut uses, mut victims) = (0, 0u32, 0usize);
        let mut next = main.head;
        while room + freed < weight {
            if next == NIL || loses(uses) {
                return false;
            }
            let node = &self.nodes[index(next)];
            freed += u64::from(node.weight);
            uses += u32::from(self.sketch.frequency(node.hash));
            victims += 1;
            next = node.next;
        }
        if loses(uses) {
            return false;
        }
        for _ in 0..victims {
            let victim = self.lists[Region::Main.index()].head;
            self.evict(victim, fate);
        }
        true
    }

    /// Takes a weighed entry off its list: to the resting list, or forgotten.
    fn evict(&mut self, i: u32, fate: &impl Fn(&V) -> Fate) {
        match fate(self.value(i)) {
            Fate::Rest(weight) => {
                self.unlink(i);
                let node = &mut self.nodes[index(i)];
                node.weight = weight;
                node.region = Region::Resting;
                self.push(Region::Resting, i);
            }
            Fate::Forget => self.remove(i),
        }
    }

    fn remove(&mut self, i: u32) {
        self.unlink(i);
        let hash = self.nodes[index(i)].hash;
        if let Ok(entry) = self.table.find_entry(hash, |&j| j == i) {
            entry.remove();
        }
        let node = &mut self.nodes[index(i)];
        node.value = None;
        node.next = self.free;
        self.free = i;
    }

    fn unlink(&mut self, i: u32) {
        let Node {
            prev,
            next,
            region,
            weight,
            ..
        } = self.nodes[index(i)];
        let list = &mut self.lists[region.index()];
        if prev == NIL {
            list.head = next;
        } else {
            self.nodes[index(prev)].next = next;
        }
        if next == NIL {
            list.tail = prev;
        } else {
            self.nodes[index(next)].prev = prev;
        }
        list.len -= 1;
        list.bytes -= u64::from(weight);
    }

    fn push(&mut self, region: Region, i: u32) {
        let list = &mut self.lists[region.index()];
        let tail = list.tail;
        list.tail = i;
        list.len += 1;
        list.bytes += u64::from(self.nodes[index(i)].weight);
        if tail == NIL {
            list.head = i;
        } else {
            self.nodes[index(tail)].next = i;
        }
        let node = &mut self.nodes[index(i)];
        node.prev = tail;
        node.next = NIL;
    }
}

#[cfg(test)]
impl<V> Shard<V> {
    /// Panics unless every list is well linked, its length and bytes are its entries', every
    /// entry in the table is on the list its region names, and every limit holds.
    pub(super) fn assert_consistent(&self) {
        let mut on_lists = 0;
        for region in [Region::Window, Region::Main, Region::Resting] {
            let list = self.lists[region.index()];
            let (mut len, mut bytes, mut prev, mut at) = (0, 0, NIL, list.head);
            while at != NIL {
                let node = &self.nodes[index(at)];
                assert!(node.value.is_some(), "a free node on a list");
                assert_eq!(node.region, region);
                assert_eq!(node.prev, prev);
                assert!(
                    self.table.find(node.hash, |&i| i == at).is_some(),
                    "an entry on a list is not in the table"
                );
                len += 1;
                bytes += u64::from(node.weight);
                (prev, at) = (at, node.next);
            }
            assert_eq!(list.tail, prev);
            assert_eq!((list.len, list.bytes), (len, bytes), "{region:?}");
            on_lists += len;
        }
        assert_eq!(self.table.len(), on_lists);
        assert!(self.lists[Region::Window.index()].bytes <= self.limits.window_bytes);
        assert!(self.lists[Region::Main.index()].bytes <= self.limits.main_bytes);
        assert!(self.lists[Region::Resting.index()].len <= self.limits.resting);
    }
}
