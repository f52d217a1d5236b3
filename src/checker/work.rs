//! What one request may cost (`docs/behaviour.md`, "What one request may cost"): the work of
//! matching, counted as items × agents × rules, against a budget (`--max-request-work`).
//!
//! A check's cost grows with the agents it names and the rules of the file it matches: the rule
//! index finds a rule's candidates without trying every rule, but a file can make every rule a
//! candidate for every path (`disallow: /*x1`, `/*x2`, …), and a set of groups merged for several
//! agents is matched once per set. So the count that bounds a check is its agents times the
//! rules of the file, whatever the file: a stranger writes it. A handler estimates what it knows
//! before it starts (every item, with the rules of the files robotsd holds, and one rule for a
//! file not held yet), and refuses the request past the budget; then each check charges its own
//! file's rules to the request's [`WorkMeter`] as its snapshot is read, before it matches, so
//! that a file fetched during a batch is counted too before its items are matched.

use std::sync::atomic::{AtomicU64, Ordering};

/// A request's work, past its budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "this request asks for about {asked} rule matches (items × agents × rules), over the \
     budget of {budget} (--max-request-work): split it, or name fewer agents"
)]
pub struct OverBudget {
    /// The work asked for, so far.
    pub asked: u64,
    /// The budget.
    pub budget: u64,
}

/// The work of one request: what was charged, against its budget. Shared by the items of a
/// batch, which charge it from concurrent checks.
#[derive(Debug)]
pub struct WorkMeter {
    budget: u64,
    charged: AtomicU64,
}

/// The cost of matching `agents` against a file of `rules` rules for `items` items: at least one
/// per agent and item, as a file with no rule still costs a lookup per agent.
pub fn cost(items: usize, agents: usize, rules: usize) -> u64 {
    (items as u64)
        .saturating_mul(agents as u64)
        .saturating_mul(rules.max(1) as u64)
}

/// Path bytes one unit of [`placement`] stands for.
const PATH_BYTES_PER_UNIT: usize = 64;

/// The work of one check as where it runs is decided (`crate::compute`): `agents` times `rules`
/// times the path's length in units of 64 bytes, at least one. A rule's match reads the path
/// (docs/behaviour.md, "The cost of a check, whatever the file"), so 4,090 rules against an
/// 8 KiB URL are far more than 4,090 rules against a short one (issue 58: 50 ms a check on an
/// async worker). In the RFC 9309 mode a path's decoded form is compared, which may be three
/// times as long.
pub fn placement(
    agents: usize,
    rules: usize,
    path_len: usize,
    decoding: robotsd_engine::PercentDecoding,
) -> u64 {
    let read = match decoding {
        robotsd_engine::PercentDecoding::Rfc9309 => path_len.saturating_mul(3),
        robotsd_engine::PercentDecoding::Google => path_len,
    };
    cost(1, agents, rules).saturating_mul(read.div_ceil(PATH_BYTES_PER_UNIT).max(1) as u64)
}

impl WorkMeter {
    /// A meter with nothing charged yet.
    pub fn new(budget: u64) -> WorkMeter {
        WorkMeter {
            budget,
            charged: AtomicU64::new(0),
        }
    }

    /// The work charged so far.
    pub fn charged(&self) -> u64 {
        self.charged.load(Ordering::Relaxed)
    }

    /// Charges `work`; past the budget, nothing is charged and the error says how much was asked.
    pub fn charge(&self, work: u64) -> Result<(), OverBudget> {
        let mut charged = self.charged.load(Ordering::Relaxed);
        loop {
            let asked = charged.saturating_add(work);
            if asked > self.budget {
                return Err(OverBudget {
                    asked,
                    budget: self.budget,
                });
            }
            match self.charged.compare_exchange_weak(
                charged,
                asked,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(()),
                Err(now) => charged = now,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_up_to_the_budget_and_no_further() {
        let meter = WorkMeter::new(100);
        assert_eq!(meter.charge(60), Ok(()));
        assert_eq!(
            meter.charge(41),
            Err(OverBudget {
                asked: 101,
                budget: 100
            })
        );
        // A refused charge takes nothing: what is left can still be used.
        assert_eq!(meter.charge(40), Ok(()));
        assert!(meter.charge(1).is_err());
    }

    #[test]
    fn where_a_check_runs_counts_its_path() {
        use robotsd_engine::PercentDecoding::{Google, Rfc9309};
        // A typical file and URL: the rules alone.
        assert_eq!(placement(1, 111, 40, Google), 111);
        // Issue 58's 4,090 rules and an 8 KiB URL: far past the inline bound.
        assert_eq!(placement(1, 4_090, 8_192, Google), 4_090 * 128);
        assert_eq!(placement(1, 4_090, 8_192, Rfc9309), 4_090 * 384);
        assert_eq!(placement(2, 0, 0, Google), 2);
    }

    #[test]
    fn a_file_without_rules_costs_a_lookup_per_agent() {
        assert_eq!(cost(1000, 2, 0), 2000);
        assert_eq!(cost(1000, 32, 28_000), 896_000_000);
        assert_eq!(cost(usize::MAX, usize::MAX, 2), u64::MAX);
    }
}
