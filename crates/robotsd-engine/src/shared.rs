//! A verdict held without a borrow: its rule and groups each beside an `Arc` of the file they
//! came from, for an answer that outlives the lookup that found the file (a cache hands files out
//! as `Arc`s). Holding them costs a reference count each, where copying their text out costs an
//! allocation a string; the text is read from the file when it is shown.

use std::sync::Arc;

use super::percent::PercentDecoding;
use super::robots_txt::RobotsTxt;
use super::verdict::{AppliedGroups, Rule, SetList, Verdict};

/// [`Verdict`], each part holding its file.
#[derive(Debug, Clone)]
pub struct SharedVerdict {
    /// Whether fetching is allowed.
    pub allowed: bool,
    /// The rule that decided, as [`Verdict::rule`].
    pub rule: Option<SharedRule>,
    /// The groups that applied, as [`Verdict::groups`].
    pub groups: Option<SharedGroups>,
}

impl SharedVerdict {
    /// The borrowed verdict again, for what only it offers ([`Verdict::usage`]).
    pub fn view(&self) -> Verdict<'_> {
        Verdict {
            allowed: self.allowed,
            rule: self.rule.as_ref().map(SharedRule::get),
            groups: self.groups.as_ref().map(SharedGroups::get),
        }
    }
}

/// A [`Rule`] of a shared file.
#[derive(Clone)]
pub struct SharedRule {
    robots: Arc<RobotsTxt>,
    id: u32,
    as_directory: bool,
}

impl SharedRule {
    /// The rule, borrowed from the file held.
    pub fn get(&self) -> Rule<'_> {
        Rule::new(&self.robots, self.id, self.as_directory)
    }
}

impl std::fmt::Debug for SharedRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

/// The same rule of the same file (the file compared by identity: a file is parsed once and
/// shared, so two copies of equal text are two files).
impl PartialEq for SharedRule {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.robots, &other.robots)
            && self.id == other.id
            && self.as_directory == other.as_directory
    }
}

impl Eq for SharedRule {}

/// [`AppliedGroups`] of a shared file.
#[derive(Clone)]
pub struct SharedGroups {
    robots: Arc<RobotsTxt>,
    sets: SetList,
    global: bool,
}

impl SharedGroups {
    /// The groups, borrowed from the file held.
    pub fn get(&self) -> AppliedGroups<'_> {
        AppliedGroups::new(&self.robots, self.sets.clone(), self.global)
    }
}

impl std::fmt::Debug for SharedGroups {
    // Not the file: a log line of an answer should not carry all of it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedGroups")
            .field("sets", &self.sets)
            .field("global", &self.global)
            .finish()
    }
}

/// The same groups of the same file (by identity, as [`SharedRule`]).
impl PartialEq for SharedGroups {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.robots, &other.robots)
            && self.sets == other.sets
            && self.global == other.global
    }
}

impl Eq for SharedGroups {}

impl RobotsTxt {
    /// [`RobotsTxt::check_path_with`] on a shared file: the same verdict, its parts holding the
    /// file rather than borrowing it.
    pub fn check_shared<S: AsRef<str>>(
        self: &Arc<Self>,
        agents: &[S],
        path: &str,
        decoding: PercentDecoding,
    ) -> SharedVerdict {
        let verdict = self.check_path_with(agents, path, decoding);
        let (rule, groups) = (verdict.rule.map(Rule::parts), verdict.groups);
        SharedVerdict {
            allowed: verdict.allowed,
            rule: rule.map(|(id, as_directory)| SharedRule {
                robots: Arc::clone(self),
                id,
                as_directory,
            }),
            groups: groups.map(|groups| {
                let (sets, global) = groups.into_parts();
                SharedGroups {
                    robots: Arc::clone(self),
                    sets,
                    global,
                }
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> Arc<RobotsTxt> {
        Arc::new(RobotsTxt::parse(
            b"user-agent: a\nuser-agent: b\ndisallow: /x\nallow: /x/y\n\nuser-agent: *\ndisallow: /\n",
        ))
    }

    /// What a verdict shows: verdict, rule, and the groups' agents and lines.
    fn shown(verdict: &Verdict<'_>) -> String {
        let groups = verdict.groups.as_ref().map(|g| {
            let agents: Vec<_> = g.agents().map(|a| (a.value, a.line, a.global)).collect();
            (agents, g.is_global(), g.agent_count(), g.crawl_delay())
        });
        format!("{} {:?} {groups:?}", verdict.allowed, verdict.rule)
    }

    #[test]
    fn the_shared_verdict_is_the_borrowed_one() {
        let robots = file();
        for agents in [&["a"][..], &["b", "a"], &["c"], &["a", "c"]] {
            for path in ["/", "/x", "/x/y", "/z"] {
                for decoding in [PercentDecoding::Google, PercentDecoding::Rfc9309] {
                    let borrowed = robots.check_path_with(agents, path, decoding);
                    let shared = robots.check_shared(agents, path, decoding);
                    assert_eq!(shown(&shared.view()), shown(&borrowed), "{agents:?} {path}");
                    assert_eq!(shared.allowed, borrowed.allowed);
                }
            }
        }
    }

    #[test]
    fn parts_are_equal_only_for_the_same_file() {
        let (one, other) = (file(), file());
        let a = one.check_shared(&["a"], "/x", PercentDecoding::Google);
        let again = one.check_shared(&["a"], "/x", PercentDecoding::Google);
        let elsewhere = other.check_shared(&["a"], "/x", PercentDecoding::Google);
        assert_eq!(a.rule, again.rule);
        assert_eq!(a.groups, again.groups);
        assert_ne!(a.rule, elsewhere.rule);
        assert_ne!(a.groups, elsewhere.groups);
        let b = one.check_shared(&["a"], "/x/y", PercentDecoding::Google);
        assert_ne!(a.rule, b.rule);
    }

    #[test]
    fn a_part_keeps_its_file() {
        let robots = file();
        let verdict = robots.check_shared(&["b"], "/x/1", PercentDecoding::Google);
        drop(robots);
        let rule = verdict.rule.as_ref().expect("a rule");
        assert_eq!(
            (rule.get().pattern().as_ref(), rule.get().line()),
            ("/x", 3)
        );
        let groups = verdict.groups.expect("groups");
        let agents: Vec<_> = groups
            .get()
            .agents()
            .map(|a| a.value.into_owned())
            .collect();
        assert_eq!(agents, ["a", "b"]);
    }
}
