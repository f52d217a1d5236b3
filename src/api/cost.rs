//! What one request may ask, checked before any of it is done (`docs/behaviour.md`, "What one
//! request may cost"): the `ua` values within their length and the agent limits, and the
//! request's work (items × agents × rules) within `--max-request-work`.
//!
//! The single check's part ([`check_agents`]) is on the hot path: it works from the lengths of
//! the values, and counts a value's names only when its length allows more than the limit.

use std::collections::HashSet;
use std::sync::Arc;

use super::AppState;
use super::problem::{AgentScope, ApiError};
use crate::checker::OverBudget;
use crate::checker::work::cost;
use crate::config::Limits;
use crate::user_agent::{agents_in, names_in};

/// The `ua` values of one check: each within the length limit and `--max-agent-names`, all of
/// them naming at most `--max-agents` agents, and at least one.
pub(super) fn check_agents(agents: &[impl AsRef<str>], limits: &Limits) -> Result<(), ApiError> {
    // At most, by length: a value of n bytes lists at most (n + 1) / 2 names (`a,b,c`).
    let mut most = 0usize;
    for ua in agents {
        let ua = ua.as_ref();
        if ua.len() > limits.max_user_agent_bytes {
            return Err(ApiError::UserAgent(format!(
                "a ua value of {} bytes exceeds the limit of {} bytes",
                ua.len(),
                limits.max_user_agent_bytes
            )));
        }
        let by_length = ua.len().div_ceil(2).max(1);
        most += if by_length <= limits.max_agent_names {
            by_length
        } else {
            value_names(ua, limits)?
        };
    }
    if agents.is_empty() {
        return Err(ApiError::Missing("ua"));
    }
    if most > limits.max_agents {
        // A sum of bounds: counted before refusing.
        check_names(agents, limits)?;
    }
    Ok(())
}

/// The names `ua` lists, within `--max-agent-names`.
fn value_names(ua: &str, limits: &Limits) -> Result<usize, ApiError> {
    let names = names_in(ua);
    if names > limits.max_agent_names {
        return Err(ApiError::TooManyAgents {
            scope: AgentScope::Value,
            count: names,
            max: limits.max_agent_names,
        });
    }
    Ok(names)
}

/// The names `agents` list in all (repeats counted), within the agent limits.
pub(super) fn check_names(agents: &[impl AsRef<str>], limits: &Limits) -> Result<usize, ApiError> {
    let mut names = 0usize;
    for ua in agents {
        names += value_names(ua.as_ref(), limits)?;
    }
    if names > limits.max_agents {
        return Err(ApiError::TooManyAgents {
            scope: AgentScope::Check,
            count: names,
            max: limits.max_agents,
        });
    }
    Ok(names)
}

/// One item of a batch: its URL and its `ua` values, shared by every item of a `urls` batch.
pub(super) type Item = (String, Arc<[String]>);

/// A batch's agents within the limits (each item's, and the distinct names across all of them),
/// and its work estimated before any item is computed: each item's names times the rules of its
/// origin's robots.txt when robotsd holds it, one rule when it does not yet (its check charges
/// the file's rules when it reads them, before it matches).
pub(super) async fn check_batch(state: &AppState, items: &[Item]) -> Result<(), ApiError> {
    let limits = &state.limits;
    let mut names = Vec::with_capacity(items.len());
    let mut last: Option<(&Arc<[String]>, usize)> = None;
    let mut lists = 0usize;
    for (_, agents) in items {
        let count = match last {
            // The items of a `urls` batch share their list: counted once.
            Some((previous, count)) if Arc::ptr_eq(previous, agents) => count,
            _ => {
                lists += 1;
                check_names(agents, limits)?
            }
        };
        last = Some((agents, count));
        names.push(count);
    }
    if lists > 1 {
        distinct_names(items, limits)?;
    }
    let estimate = estimate(state, items, &names).await;
    if estimate > limits.max_request_work {
        return Err(ApiError::TooMuchWork(OverBudget {
            asked: estimate,
            budget: limits.max_request_work,
        }));
    }
    Ok(())
}

/// At most `--max-agents` distinct names across the items' lists.
fn distinct_names(items: &[Item], limits: &Limits) -> Result<(), ApiError> {
    let mut seen: HashSet<&str> = HashSet::new();
    for (_, agents) in items {
        seen.extend(agents.iter().flat_map(|ua| agents_in(ua)));
        if seen.len() > limits.max_agents {
            // Counted whole, so that the problem says how many the request names.
            let all: HashSet<&str> = items
                .iter()
                .flat_map(|(_, agents)| agents.iter().flat_map(|ua| agents_in(ua)))
                .collect();
            return Err(ApiError::TooManyAgents {
                scope: AgentScope::Request,
                count: all.len(),
                max: limits.max_agents,
            });
        }
    }
    Ok(())
}

/// The items' work: each item's `names` times its origin's rules as held now (one rule for an
/// origin not held). Consecutive items of one origin, as a batch usually lists them, are looked
/// up once.
async fn estimate(state: &AppState, items: &[Item], names: &[usize]) -> u64 {
    let mut total = 0u64;
    let mut last: Option<(&str, usize)> = None;
    for ((url, _), &names) in items.iter().zip(names) {
        let rules = match last {
            // A prefix compare: this runs for every item of every batch.
            Some((origin, rules)) if same_origin(url, origin) => rules,
            _ => {
                let rules = state.checker.held_rules(url).await.unwrap_or(1);
                last = Some((origin_part(url), rules));
                rules
            }
        };
        total = total.saturating_add(cost(1, names, rules));
    }
    total
}

/// Whether `url` is of `origin`, as [`origin_part`] cuts it.
fn same_origin(url: &str, origin: &str) -> bool {
    url.starts_with(origin)
        && matches!(
            url.as_bytes().get(origin.len()),
            None | Some(b'/' | b'?' | b'#')
        )
}

/// The scheme and authority of `url` as written (`https://example.com:8443`), to tell items of
/// one origin apart cheaply; two spellings of one origin are only looked up twice.
fn origin_part(url: &str) -> &str {
    let start = url.find("://").map_or(0, |i| i + 3);
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    &url[..end]
}

/// `items` items of `names` agents each against `rules` rules, within `--max-request-work`.
pub(super) fn check_work(
    items: usize,
    names: usize,
    rules: usize,
    limits: &Limits,
) -> Result<(), ApiError> {
    let asked = cost(items, names, rules);
    if asked > limits.max_request_work {
        return Err(ApiError::TooMuchWork(OverBudget {
            asked,
            budget: limits.max_request_work,
        }));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            max_agents: 4,
            max_agent_names: 3,
            ..Limits::default()
        }
    }

    #[test]
    fn a_short_value_is_not_counted_and_a_long_list_is_refused() {
        assert_eq!(check_agents(&["SomeBot"], &limits()), Ok(()));
        assert_eq!(check_agents(&["a,b,c"], &limits()), Ok(()));
        assert_eq!(
            check_agents(&["a,b,c,d"], &limits()),
            Err(ApiError::TooManyAgents {
                scope: AgentScope::Value,
                count: 4,
                max: 3
            })
        );
        // A long header is one name, however long.
        let header = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
        assert_eq!(check_agents(&[header], &limits()), Ok(()));
    }

    #[test]
    fn a_check_names_at_most_max_agents_repeats_counted() {
        assert_eq!(check_agents(&["a,b", "c,d"], &limits()), Ok(()));
        assert_eq!(
            check_agents(&["a,b", "c,d", "a"], &limits()),
            Err(ApiError::TooManyAgents {
                scope: AgentScope::Check,
                count: 5,
                max: 4
            })
        );
        assert_eq!(
            check_agents(&[] as &[&str], &limits()),
            Err(ApiError::Missing("ua"))
        );
    }

    #[test]
    fn distinct_names_are_counted_across_items() {
        let item = |ua: &[&str]| {
            (
                "https://a.example/".to_string(),
                ua.iter().map(|s| s.to_string()).collect::<Arc<[String]>>(),
            )
        };
        let same = vec![item(&["a,b"]), item(&["b", "a"]), item(&["a"])];
        assert_eq!(distinct_names(&same, &limits()), Ok(()));
        let more = vec![item(&["a,b"]), item(&["c", "d"]), item(&["e"])];
        assert_eq!(
            distinct_names(&more, &limits()),
            Err(ApiError::TooManyAgents {
                scope: AgentScope::Request,
                count: 5,
                max: 4
            })
        );
    }

    #[test]
    fn origins_are_told_apart_by_scheme_and_authority() {
        assert_eq!(
            origin_part("https://example.com:8443/a?b"),
            "https://example.com:8443"
        );
        assert_eq!(origin_part("http://a.example?x"), "http://a.example");
        assert_eq!(origin_part("http://a.example"), "http://a.example");
        assert_eq!(origin_part("/relative"), "");
        assert!(same_origin("https://a.example/x", "https://a.example"));
        assert!(same_origin("https://a.example", "https://a.example"));
        assert!(!same_origin("https://a.example.net/x", "https://a.example"));
        assert!(!same_origin("https://b.example/x", "https://a.example"));
    }

    #[test]
    fn work_past_the_budget_is_refused_and_names_the_flag() {
        let limits = Limits {
            max_request_work: 1000,
            ..Limits::default()
        };
        assert_eq!(check_work(10, 10, 10, &limits), Ok(()));
        let err = check_work(10, 10, 11, &limits).unwrap_err();
        assert!(err.to_string().contains("--max-request-work"), "{err}");
        assert_eq!(err.problem().status, 413);
    }
}
