//! The RFC 9309 mode's reading of a parsed file (`PercentDecoding::Rfc`): patterns brought to
//! the RFC's form before they are matched. A reader of [`RobotsTxt`], above both the file's data
//! and the percent-encoding rules it applies (`crate::percent`).

use super::RobotsTxt;
use crate::index::Best;
use crate::pattern::{self, index_htm_directory};
use crate::percent::{pattern_rewritten, rfc_pattern};

impl RobotsTxt {
    /// Whether some pattern of the file changes in the RFC form, so that the RFC mode scans the
    /// rules instead of asking the index (worked out once per parsed file).
    pub(crate) fn rfc_needs_scan(&self) -> bool {
        *self.rfc_rewritten.get_or_init(|| {
            self.rules
                .iter()
                .any(|rule| pattern_rewritten(rule.pattern(&self.arena)))
        })
    }

    /// The best rule of a set for a path in RFC form, each pattern brought to RFC form first:
    /// the same precedence as the index (longest pattern, `allow` on ties, earliest line), with
    /// lengths counted after decoding.
    pub(crate) fn best_in_set_rfc(&self, set: u32, path: &[u8]) -> Option<Best> {
        let mut best = None;
        for id in self.set_rule_ids(&self.sets[set as usize]) {
            let rule = self.rules[id as usize];
            if rule.pattern_len == 0 {
                continue;
            }
            let (pattern, len) = rfc_pattern(rule.pattern(&self.arena));
            if pattern::matches(path, &pattern) {
                let found = Best::new(len, rule.is_allow(), rule.line(), id, false);
                best = Best::max(best, Some(found));
            }
            // Google's `index.htm` extension, on the decoded pattern: `dir/` exactly.
            if let Some(dir) = index_htm_directory(&pattern).filter(|_| rule.is_allow()) {
                let mut exact = pattern[..dir].to_vec();
                exact.push(b'$');
                if pattern::matches(path, &exact) {
                    let found = Best::new(dir + 1, true, rule.line(), id, true);
                    best = Best::max(best, Some(found));
                }
            }
        }
        best
    }
}
