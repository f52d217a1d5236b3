//! Sets of groups: the groups that apply together (all naming one agent, or all `*` groups),
//! each distinct list given one id while the file is parsed.

use std::collections::HashMap;

use super::to_u32;

/// Gives each distinct list of groups one set id.
pub(super) struct SetInterner {
    pub(super) set_groups: Vec<u32>,
    /// Ranges of `set_groups`.
    pub(super) sets: Vec<(u32, u32)>,
    /// The set made of just this group, by group id (the common case).
    pub(super) single: Vec<u32>,
    /// Sets of several groups (rare: an agent named in several groups).
    pub(super) multi: HashMap<Vec<u32>, u32>,
}

impl SetInterner {
    pub(super) fn intern(&mut self, groups: &[u32]) -> u32 {
        if let [g] = groups
            && self.single[*g as usize] != u32::MAX
        {
            return self.single[*g as usize];
        }
        if groups.len() > 1
            && let Some(&set) = self.multi.get(groups)
        {
            return set;
        }
        let set = to_u32(self.sets.len());
        let start = to_u32(self.set_groups.len());
        self.set_groups.extend_from_slice(groups);
        self.sets.push((start, to_u32(self.set_groups.len())));
        match groups {
            [g] => self.single[*g as usize] = set,
            _ => {
                self.multi.insert(groups.to_vec(), set);
            }
        }
        set
    }
}

/// Byte-wise order of `a` and `b` with ASCII letters folded to lower case.
pub(crate) fn cmp_ignore_ascii_case(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    a.iter()
        .map(u8::to_ascii_lowercase)
        .cmp(b.iter().map(u8::to_ascii_lowercase))
}
