//! The rule and groups an answer names, and the agents it was asked about, as the answer shows
//! them: within their bounds ([`bounds`]), read when the answer is written.
//!
//! The rule and groups are held with the parsed file they came from (a reference count) and
//! their text is read from it; the token is a part of the agent given. Copying each text out,
//! as answers did until issue 42, cost one allocation a string: seven of a cached check's
//! twenty-six.

use std::borrow::Cow;

use robotsd_engine::{AgentLine, AppliedGroups, Directive, Rule, SharedGroups, SharedRule};

use crate::bounds;
use crate::user_agent::{UserAgentError, product_token};

/// The rule that decided, held with its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleInfo(pub SharedRule);

impl RuleInfo {
    /// `allow` or `disallow`.
    pub fn directive(&self) -> Directive {
        self.0.get().directive()
    }

    /// Its 1-based line in robots.txt.
    pub fn line(&self) -> u32 {
        self.0.get().line()
    }

    /// The pattern as shown, and whether it was cut ([`pattern_shown`]).
    pub fn pattern(&self) -> (Cow<'_, str>, bool) {
        pattern_shown(&self.0.get())
    }
}

/// A rule's pattern as written, cut at [`bounds::MAX_PATTERN_JSON_BYTES`]; whether it was cut.
pub fn pattern_shown<'a>(rule: &Rule<'a>) -> (Cow<'a, str>, bool) {
    within(rule.pattern(), bounds::MAX_PATTERN_JSON_BYTES)
}

/// The groups that applied, held with their file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupInfo(pub SharedGroups);

impl GroupInfo {
    /// The groups, borrowed from the file.
    pub fn get(&self) -> AppliedGroups<'_> {
        self.0.get()
    }
}

/// What an answer shows of applied groups: their first [`bounds::MAX_GROUP_AGENTS`]
/// `user-agent` lines, each value cut at [`bounds::MAX_AGENT_JSON_BYTES`].
pub struct GroupShown<'a> {
    groups: AppliedGroups<'a>,
}

impl<'a> GroupShown<'a> {
    /// `groups` as an answer shows them.
    pub fn of(groups: AppliedGroups<'a>) -> GroupShown<'a> {
        GroupShown { groups }
    }

    /// The `user-agent` lines shown: each value as shown, whether it was cut, and its line.
    pub fn agents(&self) -> impl Iterator<Item = (Cow<'a, str>, bool, u32)> + 'a {
        self.groups.agents().take(bounds::MAX_GROUP_AGENTS).map(
            |AgentLine { value, line, .. }| {
                let (value, cut) = within(value, bounds::MAX_AGENT_JSON_BYTES);
                (value, cut, line)
            },
        )
    }

    /// How many `user-agent` lines the groups have, given that `shown` of them were: counted
    /// only when the bound may have left some out.
    pub fn agents_total(&self, shown: usize) -> usize {
        if shown < bounds::MAX_GROUP_AGENTS {
            shown
        } else {
            self.groups.agent_count()
        }
    }

    /// Whether these are the `*` groups.
    pub fn global(&self) -> bool {
        self.groups.is_global()
    }
}

/// `text` cut as [`bounds::cut_json`] says, borrowed when it was; whether it was cut.
fn within(text: Cow<'_, str>, max: usize) -> (Cow<'_, str>, bool) {
    match text {
        Cow::Borrowed(text) => match bounds::cut_json(text, max) {
            Some(part) => (Cow::Borrowed(part), true),
            None => (Cow::Borrowed(text), false),
        },
        Cow::Owned(text) => {
            let (text, cut) = bounds::cut_owned(&text, max);
            (Cow::Owned(text), cut)
        }
    }
}

/// A `ua` value and the product token robotsd used for it, a part of the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentToken {
    /// The value as given; then the token, were it ever not a part of it.
    text: String,
    /// The value's length in `text`.
    input_len: usize,
    /// Where the token is in `text`.
    token: std::ops::Range<usize>,
}

impl AgentToken {
    /// `input` and its product token; an error when it has none ([`product_token`]).
    pub fn new(input: &str) -> Result<AgentToken, UserAgentError> {
        let token = product_token(input)?;
        // The token is a slice of the value (every rule of `product_token` cuts one out of it):
        // where it starts is where it lies in it, and nothing is copied twice.
        let start = (token.as_ptr() as usize).wrapping_sub(input.as_ptr() as usize);
        let within = input
            .get(start..start.wrapping_add(token.len()))
            .is_some_and(|part| std::ptr::eq(part, token));
        Ok(if within {
            AgentToken {
                text: input.to_owned(),
                input_len: input.len(),
                token: start..start + token.len(),
            }
        } else {
            AgentToken {
                text: format!("{input}{token}"),
                input_len: input.len(),
                token: input.len()..input.len() + token.len(),
            }
        })
    }

    /// The value, as given.
    pub fn input(&self) -> &str {
        &self.text[..self.input_len]
    }

    /// The product token, as used.
    pub fn token(&self) -> &str {
        &self.text[self.token.clone()]
    }
}

impl AsRef<str> for AgentToken {
    /// The token: what a file's groups are matched against.
    fn as_ref(&self) -> &str {
        self.token()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use robotsd_engine::{PercentDecoding, RobotsTxt};

    use super::*;

    fn verdict(file: &str, agent: &str, path: &str) -> robotsd_engine::SharedVerdict {
        Arc::new(RobotsTxt::parse(file.as_bytes())).check_shared(
            &[agent],
            path,
            PercentDecoding::Google,
        )
    }

    #[test]
    fn tokens_are_the_parts_product_token_finds() {
        for input in [
            "SomeBot",
            "  SomeBot/1.0 (+https://bot.example)",
            "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
            "é-Bot",
        ] {
            let agent = AgentToken::new(input);
            match product_token(input) {
                Ok(token) => assert_eq!(agent.expect("a token").token(), token, "{input}"),
                Err(error) => assert_eq!(agent.err(), Some(error), "{input}"),
            }
        }
        assert!(AgentToken::new("/1.0").is_err());
    }

    #[test]
    fn a_long_pattern_is_cut_and_says_so() {
        let long = format!("/{}", "a".repeat(bounds::MAX_PATTERN_JSON_BYTES));
        let file = format!("user-agent: *\ndisallow: {long}\ndisallow: /short\n");
        let cut = RuleInfo(verdict(&file, "bot", &long).rule.expect("a rule"));
        let (pattern, truncated) = cut.pattern();
        assert!(truncated && long.starts_with(&*pattern));
        assert_eq!(pattern.len(), bounds::MAX_PATTERN_JSON_BYTES);
        let whole = RuleInfo(verdict(&file, "bot", "/short").rule.expect("a rule"));
        assert_eq!(whole.pattern(), (Cow::Borrowed("/short"), false));
        assert_eq!((whole.directive(), whole.line()), (Directive::Disallow, 3));
    }

    #[test]
    fn groups_show_their_first_agents_cut_and_counted() {
        let long = format!("bot {}", "b".repeat(bounds::MAX_AGENT_JSON_BYTES));
        let mut file = format!("user-agent: {long}\n");
        for i in 0..20 {
            file.push_str(&format!("user-agent: bot{i}\n"));
        }
        file.push_str("disallow: /\n");
        let groups = verdict(&file, "bot", "/").groups.expect("groups");
        let shown = GroupShown::of(groups.get());
        let agents: Vec<_> = shown.agents().collect();
        assert_eq!(agents.len(), bounds::MAX_GROUP_AGENTS);
        assert!(agents[0].1 && long.starts_with(&*agents[0].0));
        assert_eq!(
            (agents[1].0.as_ref(), agents[1].1, agents[1].2),
            ("bot0", false, 2)
        );
        assert_eq!(shown.agents_total(agents.len()), 21);
        assert!(!shown.global());

        let few = verdict("user-agent: *\ndisallow: /x\n", "bot", "/x");
        let shown = GroupShown::of(few.groups.as_ref().expect("groups").get());
        assert_eq!(shown.agents().count(), 1);
        assert_eq!(shown.agents_total(1), 1);
        assert!(shown.global());
    }
}
