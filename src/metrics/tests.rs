//! The metrics' tests.

use super::*;

use crate::cache::{CacheConfig, OriginCache};
use crate::destination::DestinationPolicy;
use crate::fetch::{FetchConfig, Fetcher};

fn cache() -> OriginCache {
    let fetcher = Fetcher::new(FetchConfig::default(), DestinationPolicy::default())
        .expect("default fetcher");
    OriginCache::new(CacheConfig::default(), fetcher)
}

#[tokio::test]
async fn every_series_is_rendered_after_observations() {
    let metrics = Metrics::new();
    metrics.observe_http("/v1/check", "GET", 200, Duration::from_millis(3));
    metrics.observe_check(true, Reason::NoMatchingRule, Lookup::Hit);
    metrics.observe_check(false, Reason::MatchedRule, Lookup::Miss);
    metrics.observe_fetch(FetchKind::Parsed, Duration::from_millis(120));

    let text = metrics.render(&cache()).await;
    for name in [
        "robotsd_http_requests_total",
        "robotsd_http_request_duration_seconds_bucket",
        "robotsd_checks_total",
        "robotsd_cache_lookups_total",
        "robotsd_cache_entries",
        "robotsd_cache_weight_bytes",
        "robotsd_cache_resting_entries",
        "robotsd_cache_resting_bytes",
        "robotsd_cache_capacity_bytes",
        "robotsd_cache_evictions_total",
        "robotsd_cache_full_total",
        "robotsd_origins_in_backoff",
        "robotsd_robots_fetches_total",
        "robotsd_robots_fetch_duration_seconds_bucket",
        "robotsd_robots_fetches_in_flight",
        "robotsd_build_info",
    ] {
        assert!(
            text.contains(&format!("\n{name}")),
            "{name} missing:\n{text}"
        );
    }
    #[cfg(target_os = "linux")]
    assert!(text.contains("process_resident_memory_bytes"), "{text}");
}

/// A route's pre-resolved series count as the labelled ones do, and what they do not cover
/// (other statuses and methods) is counted by label.
#[tokio::test]
async fn a_route_s_series_count_as_its_labels_do() {
    let metrics = Metrics::new();
    let series = super::RouteSeries::default();
    for (method, status) in [
        ("GET", 200),
        ("GET", 200),
        ("POST", 200),
        ("GET", 400),
        ("HEAD", 200),
    ] {
        metrics.observe_route(
            &series,
            "/v1/check",
            method,
            status,
            Duration::from_millis(3),
        );
    }
    // The same series reached by label, as an unmatched route would be.
    metrics.observe_http("/v1/check", "GET", 200, Duration::from_millis(3));
    let text = metrics.render(&cache()).await;
    for line in [
        r#"robotsd_http_requests_total{method="GET",route="/v1/check",status="200"} 3"#,
        r#"robotsd_http_requests_total{method="POST",route="/v1/check",status="200"} 1"#,
        r#"robotsd_http_requests_total{method="GET",route="/v1/check",status="400"} 1"#,
        r#"robotsd_http_requests_total{method="HEAD",route="/v1/check",status="200"} 1"#,
        r#"robotsd_http_request_duration_seconds_count{route="/v1/check"} 6"#,
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line}:\n{text}");
    }
}

#[tokio::test]
async fn labels_are_right() {
    let metrics = Metrics::new();
    metrics.observe_http("/v1/check", "GET", 200, Duration::from_millis(3));
    metrics.observe_check(true, Reason::NoMatchingRule, Lookup::Hit);
    metrics.observe_check(false, Reason::MatchedRule, Lookup::Coalesced);
    metrics.observe_check(false, Reason::MatchedRule, Lookup::Stale);
    metrics.observe_fetch(FetchKind::NoRobots, Duration::from_millis(10));
    metrics.observe_fetch(FetchKind::Refused, Duration::from_millis(1));

    let text = metrics.render(&cache()).await;
    for line in [
        r#"robotsd_http_requests_total{method="GET",route="/v1/check",status="200"} 1"#,
        r#"robotsd_http_request_duration_seconds_count{route="/v1/check"} 1"#,
        r#"robotsd_checks_total{reason="no_matching_rule",verdict="allow"} 1"#,
        r#"robotsd_checks_total{reason="matched_rule",verdict="disallow"} 2"#,
        r#"robotsd_cache_lookups_total{result="hit"} 1"#,
        r#"robotsd_cache_lookups_total{result="miss"} 0"#,
        r#"robotsd_cache_lookups_total{result="stale"} 1"#,
        r#"robotsd_cache_lookups_total{result="coalesced"} 1"#,
        r#"robotsd_robots_fetches_total{outcome="parsed"} 0"#,
        r#"robotsd_robots_fetches_total{outcome="no_robots"} 1"#,
        r#"robotsd_robots_fetches_total{outcome="unreachable"} 0"#,
        r#"robotsd_robots_fetches_total{outcome="refused"} 1"#,
        "robotsd_robots_fetch_duration_seconds_count 2",
        "robotsd_cache_entries 0",
        "robotsd_cache_weight_bytes 0",
        "robotsd_cache_resting_entries 0",
        "robotsd_cache_resting_bytes 0",
        "robotsd_cache_capacity_bytes 268435456",
        "robotsd_cache_evictions_total 0",
        "robotsd_cache_full_total 0",
        "robotsd_origins_in_backoff 0",
        "robotsd_robots_fetches_in_flight 0",
        &format!(
            r#"robotsd_build_info{{version="{}"}} 1"#,
            env!("CARGO_PKG_VERSION")
        ),
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing `{line}` in:\n{text}"
        );
    }
}

#[tokio::test]
async fn no_client_text_reaches_a_label() {
    let metrics = Metrics::new();
    // An extension method is the client's text too.
    metrics.observe_http("/v1/items/{id}", "BREW", 405, Duration::ZERO);

    let text = metrics.render(&cache()).await;
    for secret in ["secret.example", "SecretBot", "bot.example", "BREW"] {
        assert!(!text.contains(secret), "{secret} leaked:\n{text}");
    }
    assert!(
        text.contains(
            r#"robotsd_http_requests_total{method="other",route="/v1/items/{id}",status="405"} 1"#
        ),
        "{text}"
    );
    // Fetch outcomes are a closed enum, so no caller text can reach that label at all.
    assert!(!text.contains(r#"outcome="other""#), "{text}");
}

#[test]
fn counter_follows_a_running_total_once() {
    let counter = IntCounter::new("t", "t").expect("valid");
    let seen = AtomicU64::new(0);
    sync_counter(&counter, &seen, 5);
    // A slower concurrent scrape that read an older total adds nothing.
    sync_counter(&counter, &seen, 3);
    sync_counter(&counter, &seen, 5);
    assert_eq!(counter.get(), 5);
    sync_counter(&counter, &seen, 7);
    assert_eq!(counter.get(), 7);
}

#[test]
fn separate_instances_do_not_share_series() {
    let a = Metrics::new();
    let b = Metrics::new();
    a.observe_fetch(FetchKind::Parsed, Duration::ZERO);
    assert_eq!(b.inner.fetches.with_label_values(&["parsed"]).get(), 0);
    assert_eq!(
        a.clone().inner.fetches.with_label_values(&["parsed"]).get(),
        1
    );
}

#[test]
fn family_names_cover_series_not_yet_seen() {
    let metrics = Metrics::new();
    let names = metrics.family_names();
    // No check has been answered, so gather() has no `robotsd_checks_total` yet; the name is
    // still listed because dashboards and alerts may query it from the start.
    for expected in [
        "robotsd_checks_total",
        "robotsd_http_request_duration_seconds",
        "robotsd_build_info",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    #[cfg(target_os = "linux")]
    assert!(names.iter().any(|n| n == "process_resident_memory_bytes"));
    assert!(names.windows(2).all(|w| w[0] < w[1]), "sorted and unique");
}

#[tokio::test]
async fn every_reason_and_verdict_lands_in_its_own_series() {
    let metrics = Metrics::new();
    for (i, reason) in Reason::ALL.into_iter().enumerate() {
        for _ in 0..=i {
            metrics.observe_check(i % 2 == 0, reason, Lookup::Miss);
        }
    }
    let text = metrics.render(&cache()).await;
    for (i, reason) in Reason::ALL.into_iter().enumerate() {
        let verdict = if i % 2 == 0 { "allow" } else { "disallow" };
        let line = format!(
            r#"robotsd_checks_total{{reason="{}",verdict="{verdict}"}} {}"#,
            reason.as_str(),
            i + 1
        );
        assert!(text.lines().any(|l| l == line), "missing {line}:\n{text}");
    }
}

#[tokio::test]
async fn usage_preferences_are_counted_by_closed_labels() {
    use crate::checker::UsageItem;
    use robotsd_engine::{Preference, UsageSource};
    let metrics = Metrics::new();
    let item = |source, category: &str, preference| UsageItem {
        source,
        category: category.to_owned().into(),
        preference,
        line: 1,
    };
    metrics.observe_usage(&[
        item(
            UsageSource::ContentUsage,
            "train-ai",
            Preference::Disallowed,
        ),
        item(UsageSource::ContentSignal, "search", Preference::Allowed),
        // Labels a file chose: never a label value of their own.
        item(
            UsageSource::ContentUsage,
            "train-genai",
            Preference::Disallowed,
        ),
        // vocab-08's new category has series of its own.
        item(UsageSource::ContentUsage, "ai-use", Preference::Allowed),
        item(
            UsageSource::ContentUsage,
            "x".repeat(60).as_str(),
            Preference::Disallowed,
        ),
    ]);
    let text = metrics.render(&cache()).await;
    for expected in [
        r#"robotsd_usage_preferences_total{category="train-ai",source="content-usage",value="n"} 1"#,
        r#"robotsd_usage_preferences_total{category="search",source="content-signal",value="y"} 1"#,
        r#"robotsd_usage_preferences_total{category="other",source="content-usage",value="n"} 2"#,
        r#"robotsd_usage_preferences_total{category="search",source="content-usage",value="y"} 0"#,
        r#"robotsd_usage_preferences_total{category="ai-use",source="content-usage",value="y"} 1"#,
        r#"robotsd_usage_preferences_total{category="ai-use",source="content-usage",value="n"} 0"#,
    ] {
        assert!(text.contains(expected), "{expected} in\n{text}");
    }
    assert!(!text.contains("train-genai"));
}
