use super::*;

const SEC: Duration = Duration::from_secs(1);
const MIN: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(86_400);

fn robots() -> Rules {
    Rules::Parsed(Arc::new(RobotsTxt::parse(b"user-agent: *\ndisallow: /x\n")))
}

fn success(max_age: Option<Duration>) -> FetchResult<()> {
    FetchResult::Success {
        rules: robots(),
        max_age,
        meta: (),
    }
}

fn failure(short: bool, retry_after: Option<Duration>) -> FetchResult<()> {
    FetchResult::Unreachable {
        retry_after,
        short,
        meta: (),
    }
}

fn basis(state: &OriginState<()>, now: Timestamp) -> BackoffBasis {
    match state.decide(now, &PolicyConfig::default()) {
        Decision::Backoff { basis, .. } => basis,
        other => panic!("not in backoff: {other:?}"),
    }
}

#[test]
fn an_unasked_fetch_waits_for_the_shortest_lifetime_and_the_backoff() {
    let config = PolicyConfig::default();
    let t0 = Timestamp::from_unix(Duration::from_secs(1_795_000_000));
    let mut state = OriginState::<()>::default();
    assert_eq!(state.wait_before_fetch(t0, &config), Duration::ZERO);
    state.apply(success(None), t0, 0.0, &config);
    assert_eq!(state.wait_before_fetch(t0 + 10 * SEC, &config), 50 * SEC);
    assert_eq!(state.wait_before_fetch(t0 + MIN, &config), Duration::ZERO);
    // A failure's retry time is longer than the gap: it wins.
    state.apply(failure(false, Some(HOUR)), t0 + MIN, 0.0, &config);
    assert_eq!(state.wait_before_fetch(t0 + MIN, &config), HOUR);
}

#[test]
fn nothing_known_means_fetch() {
    let state = OriginState::<()>::default();
    assert!(matches!(
        state.decide(
            Timestamp::from_unix(Duration::from_secs(1_795_000_000)),
            &PolicyConfig::default()
        ),
        Decision::Fetch
    ));
}

#[test]
fn max_age_120_is_fresh_until_expiry_then_stale() {
    let config = PolicyConfig::default();
    let t0 = Timestamp::from_unix(Duration::from_secs(1_795_000_000));
    let mut state = OriginState::default();
    state.apply(success(Some(Duration::from_secs(120))), t0, 0.0, &config);
    let at = |d| state.decide(t0 + d, &config);
    assert!(matches!(
        at(Duration::from_secs(119)),
        Decision::Copy { stale: false, .. }
    ));
    assert!(matches!(
        at(Duration::from_secs(120)),
        Decision::Copy { stale: true, .. }
    ));
}

#[test]
fn lifetime_defaults_to_24h_and_is_clamped() {
    let config = PolicyConfig::default();
    assert_eq!(config.lifetime(None), DAY);
    assert_eq!(config.lifetime(Some(Duration::ZERO)), MIN);
    assert_eq!(config.lifetime(Some(Duration::from_secs(5))), MIN);
    assert_eq!(config.lifetime(Some(7 * DAY)), DAY);
}

#[test]
fn first_failure_disallows_everything_for_12_hours() {
    let config = PolicyConfig::default();
    let t0 = Timestamp::from_unix(Duration::from_secs(1_795_000_000));
    let mut state = OriginState::default();
    state.apply(success(None), t0, 0.0, &config);
    state.apply(failure(false, None), t0 + DAY, 0.0, &config);
    assert_eq!(basis(&state, t0 + DAY), BackoffBasis::DisallowAll);
    assert_eq!(
        basis(&state, t0 + DAY + 12 * HOUR - MIN),
        BackoffBasis::DisallowAll
    );
}

#[test]
fn between_12_hours_and_30_days_the_last_good_copy_is_used() {
    let config = PolicyConfig::default();
    let t0 = Timestamp::from_unix(Duration::from_secs(1_795_000_000));
    let mut state = OriginState::default();
    state.apply(success(None), t0, 0.0, &config);
    let first = t0 + DAY;
    state.apply(failure(false, None), first, 0.0, &config);
    // Later failures keep the run's start.
    state.apply(failure(false, None), first + 6 * HOUR, 0.0, &config);
    assert_eq!(basis(&state, first + 12 * HOUR), BackoffBasis::LastGoodCopy);
    assert_eq!(basis(&state, first + 29 * DAY), BackoffBasis::LastGoodCopy);
    match state.decide(first + 13 * HOUR, &config) {
        Decision::Backoff {
            copy: Some(copy), ..
        } => assert_eq!(copy.fetched_at, t0),
        other => panic!("{other:?}"),
    }
}

#[test]
fn without_a_copy_everything_is_allowed_after_12_hours() {
    let config = PolicyConfig::default();
    let t0 = Timestamp::from_unix(Duration::from_secs(1_795_000_000));
    let mut state = OriginState::default();
    state.apply(failure(false, None), t0, 0.0, &config);
    assert_eq!(basis(&state, t0 + 12 * HOUR), BackoffBasis::AllowAllNoCopy);
}

#[test]
fn after_30_days_it_is_as_if_there_were_no_robots_txt() {
    let config = PolicyConfig::default();
    let t0 = Timestamp::from_unix(Duration::from_secs(1_795_000_000));
    let mut state = OriginState::default();
    state.apply(success(None), t0, 0.0, &config);
    state.apply(failure(false, None), t0 + DAY, 0.0, &config);
    assert_eq!(
        basis(&state, t0 + 31 * DAY),
        BackoffBasis::AllowAllAfter30Days
    );
}

#[test]
fn success_ends_the_backoff() {
    let config = PolicyConfig::default();
    let t0 = Timestamp::from_unix(Duration::from_secs(1_795_000_000));
    let mut state = OriginState::default();
    state.apply(failure(false, None), t0, 0.0, &config);
    state.apply(success(None), t0 + HOUR, 0.0, &config);
    assert!(state.backoff.is_none());
    assert!(matches!(
        state.decide(t0 + HOUR, &config),
        Decision::Copy { stale: false, .. }
    ));
}

#[test]
fn no_fetch_before_the_next_retry_time() {
    let config = PolicyConfig::default();
    let t0 = Timestamp::from_unix(Duration::from_secs(1_795_000_000));
    let mut state = OriginState::default();
    state.apply(failure(false, None), t0, 0.0, &config);
    let next = state.backoff.as_ref().map(|b| b.next_retry).unwrap();
    assert!(!state.may_fetch(next - Duration::from_millis(1)));
    assert!(matches!(
        state.decide(next - Duration::from_millis(1), &config),
        Decision::Backoff {
            retry_due: false,
            ..
        }
    ));
    assert!(state.may_fetch(next));
    assert!(matches!(
        state.decide(next, &config),
        Decision::Backoff {
            retry_due: true,
            ..
        }
    ));
}

#[test]
fn retries_back_off_exponentially_within_bounds() {
    let config = PolicyConfig::default();
    let delays: Vec<_> = (1..=8)
        .map(|n| config.retry_delay(n, false, None, 1.0))
        .collect();
    assert_eq!(delays[0], MIN);
    assert_eq!(delays[1], 2 * MIN);
    assert_eq!(delays[2], 4 * MIN);
    assert_eq!(delays[7], HOUR);
    for n in 1..=40 {
        for jitter in [0.0, 0.25, 0.5, 0.999, f64::NAN] {
            let d = config.retry_delay(n, false, None, jitter);
            assert!((MIN..=HOUR).contains(&d), "{n} {jitter} {d:?}");
        }
    }
    // Equal jitter: at least half the full delay.
    assert_eq!(config.retry_delay(3, false, None, 0.0), 2 * MIN);
}

#[test]
fn short_failures_retry_at_the_short_end_and_retry_after_is_bounded() {
    let config = PolicyConfig::default();
    assert_eq!(config.retry_delay(10, true, None, 0.0), MIN);
    assert!(config.retry_delay(10, true, None, 0.99) < 2 * MIN);
    assert_eq!(
        config.retry_delay(1, false, Some(Duration::from_secs(5)), 0.5),
        MIN
    );
    assert_eq!(config.retry_delay(1, true, Some(10 * MIN), 0.5), 10 * MIN);
    assert_eq!(config.retry_delay(1, false, Some(DAY), 0.5), HOUR);
}

#[test]
fn a_refusal_is_kept_only_briefly_and_never_as_a_last_good_copy() {
    let config = PolicyConfig::default();
    let t0 = Timestamp::from_unix(Duration::from_secs(1_795_000_000));
    let mut state = OriginState::default();
    state.apply(success(None), t0, 0.0, &config);
    state.apply(FetchResult::Refused { meta: () }, t0, 0.0, &config);
    assert!(matches!(
        state.decide(t0 + MIN - Duration::from_secs(1), &config),
        Decision::Refused { stale: false, .. }
    ));
    assert!(matches!(
        state.decide(t0 + MIN, &config),
        Decision::Refused { stale: true, .. }
    ));
    state.apply(failure(false, None), t0 + MIN, 0.0, &config);
    assert_eq!(basis(&state, t0 + 13 * HOUR), BackoffBasis::AllowAllNoCopy);
}

#[test]
fn config_validation_rejects_contradictions() {
    assert_eq!(PolicyConfig::default().validate(), Ok(()));
    let bad = PolicyConfig {
        retry_min: 2 * HOUR,
        ..PolicyConfig::default()
    };
    assert!(bad.validate().is_err());
    let bad = PolicyConfig {
        min_lifetime: Duration::ZERO,
        ..PolicyConfig::default()
    };
    assert!(bad.validate().is_err());
}

#[test]
fn a_backoff_says_when_its_basis_ends_by_the_configured_windows() {
    let config = PolicyConfig {
        disallow_window: 6 * HOUR,
        last_copy_window: 10 * DAY,
        ..PolicyConfig::default()
    };
    let t0 = Timestamp::from_unix(Duration::from_secs(1_795_000_000));
    let until = |state: &OriginState<()>, now| match state.decide(now, &config) {
        Decision::Backoff { basis, until, .. } => (basis, until),
        other => panic!("not in backoff: {other:?}"),
    };
    let mut state = OriginState::default();
    state.apply(success(None), t0, 0.0, &config);
    let first = t0 + DAY;
    state.apply(failure(false, None), first, 0.0, &config);
    assert_eq!(
        until(&state, first + HOUR),
        (BackoffBasis::DisallowAll, Some(first + 6 * HOUR))
    );
    assert_eq!(
        until(&state, first + 6 * HOUR),
        (BackoffBasis::LastGoodCopy, Some(first + 10 * DAY))
    );
    assert_eq!(
        until(&state, first + 10 * DAY),
        (BackoffBasis::AllowAllAfter30Days, None)
    );
    let mut no_copy = OriginState::default();
    no_copy.apply(failure(false, None), t0, 0.0, &config);
    assert_eq!(
        until(&no_copy, t0 + 7 * HOUR),
        (BackoffBasis::AllowAllNoCopy, Some(t0 + 10 * DAY))
    );
}

#[test]
fn a_304_renews_the_copy_from_now_and_ends_a_backoff() {
    let config = PolicyConfig::default();
    let t0 = Timestamp::from_unix(Duration::from_secs(1_795_000_000));
    let mut state = OriginState::<u32>::default();
    state.apply(
        FetchResult::Success {
            rules: robots(),
            max_age: Some(HOUR),
            meta: 1,
        },
        t0,
        0.0,
        &config,
    );
    // Expired, then a failed refresh: in backoff, on the last good copy.
    let failed_at = t0 + 2 * HOUR;
    state.apply(
        FetchResult::Unreachable {
            retry_after: None,
            short: false,
            meta: 2,
        },
        failed_at,
        0.0,
        &config,
    );
    assert!(state.backoff.is_some());
    // The retry is a revalidation answered 304: the same copy, renewed for the 304's max-age.
    let renewed_at = failed_at + HOUR;
    state.apply(
        FetchResult::NotModified {
            max_age: Some(2 * HOUR),
            meta: 3,
        },
        renewed_at,
        0.0,
        &config,
    );
    assert!(state.backoff.is_none());
    let copy = state.copy.as_ref().expect("the copy");
    assert_eq!(copy.fetched_at, renewed_at);
    assert_eq!(copy.expires_at, renewed_at + 2 * HOUR);
    assert_eq!(copy.meta, 3);
    assert!(matches!(
        state.decide(renewed_at + HOUR, &config),
        Decision::Copy { stale: false, .. }
    ));
    // Without a copy a 304 answers nothing: only the fetch's time is taken in.
    let mut empty = OriginState::<u32>::default();
    empty.apply(
        FetchResult::NotModified {
            max_age: None,
            meta: 4,
        },
        t0,
        0.0,
        &config,
    );
    assert!(empty.copy.is_none() && empty.backoff.is_none());
    assert_eq!(empty.last_fetch, Some(t0));
}
