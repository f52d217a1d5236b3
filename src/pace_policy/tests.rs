use super::*;

const T0: u64 = 1_795_000_000_000;

fn request(interval_ms: u64) -> SlotRequest {
    SlotRequest {
        interval_ms,
        max_interval_ms: 60_000,
        max_wait_ms: 60_000,
        guard_ms: 0,
    }
}

#[test]
fn the_first_slot_is_now_and_the_next_keep_the_interval() {
    let mut state = PaceState::default();
    let first = state.reserve(T0, request(500));
    assert!(first.reserved);
    assert_eq!(first.at, T0);
    let second = state.reserve(T0, request(500));
    assert_eq!(second.at, T0 + 500);
    let third = state.reserve(T0 + 100, request(500));
    assert_eq!(third.at, T0 + 1000);
    // Long after, the slot is now again.
    let later = state.reserve(T0 + 10_000, request(500));
    assert_eq!(later.at, T0 + 10_000);
}

#[test]
fn each_reservation_keeps_its_own_interval_after_the_slot_before_it() {
    let mut state = PaceState::default();
    state.reserve(T0, request(2000));
    // An agent with a shorter crawl-delay still keeps its own interval after the last slot.
    assert_eq!(state.reserve(T0, request(500)).at, T0 + 500);
    assert_eq!(state.reserve(T0, request(2000)).at, T0 + 2500);
}

#[test]
fn a_slot_beyond_the_longest_wait_is_not_taken_and_says_when_to_ask_again() {
    let mut state = PaceState::default();
    let limit = SlotRequest {
        max_wait_ms: 1500,
        ..request(1000)
    };
    assert!(state.reserve(T0, limit).reserved);
    assert!(state.reserve(T0, limit).reserved); // T0 + 1000
    let deferred = state.reserve(T0, limit);
    assert!(!deferred.reserved);
    // The earliest slot is T0 + 2000; asked again at T0 + 500 it is within the wait.
    assert_eq!(deferred.at, T0 + 500);
    assert_eq!(state.last_slot, T0 + 1000, "a deferral takes nothing");
    let again = state.reserve(deferred.at, limit);
    assert!(again.reserved);
    assert_eq!(again.at, T0 + 2000);
}

#[test]
fn retry_after_blocks_every_slot_until_it_ends() {
    let mut state = PaceState::default();
    state.reserve(T0, request(200));
    state.signal(
        T0 + 50,
        Signal::Pushback {
            retry_after_ms: Some(3000),
        },
    );
    let next = state.reserve(T0 + 60, request(200));
    assert_eq!(next.at, T0 + 3050);
    assert_eq!(next.blocked_until, T0 + 3050);
    // The pushback also doubled the interval.
    assert_eq!(next.interval_ms, 399);
    assert_eq!(state.reserve(T0 + 60, request(200)).at, T0 + 3050 + 399);
}

#[test]
fn pushback_doubles_the_interval_up_to_the_cap() {
    let mut state = PaceState::default();
    for _ in 0..3 {
        state.signal(
            T0,
            Signal::Pushback {
                retry_after_ms: None,
            },
        );
    }
    assert_eq!(state.slowdown_at(T0), 8 * UNSLOWED);
    let grant = state.reserve(T0, request(1000));
    assert_eq!(grant.interval_ms, 8000);
    assert_eq!(grant.slowdown, 8000);
    for _ in 0..20 {
        state.signal(
            T0,
            Signal::Pushback {
                retry_after_ms: None,
            },
        );
    }
    assert_eq!(state.slowdown_at(T0), MAX_SLOWDOWN);
    // Never longer than the largest interval, however slowed.
    assert_eq!(state.reserve(T0, request(1000)).interval_ms, 60_000);
}

#[test]
fn a_slowdown_decays_with_time_and_with_successes() {
    let mut state = PaceState::default();
    state.signal(
        T0,
        Signal::Pushback {
            retry_after_ms: None,
        },
    );
    state.signal(
        T0,
        Signal::Pushback {
            retry_after_ms: None,
        },
    );
    assert_eq!(state.slowdown_at(T0), 4000);
    assert_eq!(state.slowdown_at(T0 + SLOWDOWN_HALF_LIFE_MS), 2500);
    assert_eq!(state.slowdown_at(T0 + 2 * SLOWDOWN_HALF_LIFE_MS), 1750);
    assert!(state.slowed(T0 + SLOWDOWN_HALF_LIFE_MS));
    assert!(!state.slowed(T0 + 16 * SLOWDOWN_HALF_LIFE_MS));
    state.signal(T0, Signal::Success);
    assert_eq!(state.slowdown_at(T0), 3700);
    for _ in 0..100 {
        state.signal(T0, Signal::Success);
    }
    assert_eq!(state.slowdown_at(T0), UNSLOWED);
}

#[test]
fn the_base_interval_comes_from_crawl_delay_capped_or_the_default() {
    let config = PaceConfig::default();
    assert_eq!(config.base_interval(None), (1000, false));
    assert_eq!(config.base_interval(Some(0.5)), (500, false));
    assert_eq!(config.base_interval(Some(0.0)), (0, false));
    assert_eq!(config.base_interval(Some(0.0004)), (1, false));
    assert_eq!(config.base_interval(Some(86_400.0)), (60_000, true));
    assert_eq!(config.base_interval(Some(f64::NAN)), (1000, false));
}

#[test]
fn state_is_kept_past_everything_that_can_still_matter() {
    let config = PaceConfig::default();
    assert!(config.keep() > config.max_retry_after);
    assert!(config.keep() > config.max_wait + config.max_interval);
    assert!(config.keep() >= Duration::from_millis(16 * SLOWDOWN_HALF_LIFE_MS));
}

#[test]
fn configurations_that_contradict_themselves_are_refused() {
    assert_eq!(PaceConfig::default().validate(), Ok(()));
    let config = PaceConfig {
        default_interval: Duration::from_secs(120),
        ..PaceConfig::default()
    };
    assert!(matches!(
        config.validate(),
        Err(PaceConfigError::DefaultAboveMax { .. })
    ));
    let config = PaceConfig {
        max_wait: Duration::ZERO,
        ..PaceConfig::default()
    };
    assert_eq!(
        config.validate(),
        Err(PaceConfigError::Zero { field: "max_wait" })
    );
}

#[test]
fn the_guard_band_follows_every_interval_but_not_the_first_slot() {
    let mut state = PaceState::default();
    let guarded = SlotRequest {
        guard_ms: 50,
        ..request(500)
    };
    assert_eq!(state.reserve(T0, guarded).at, T0);
    // A fetch started 25 ms late at T0 + 25 and one on time at T0 + 550 are 525 ms apart.
    let second = state.reserve(T0, guarded);
    assert_eq!(second.at, T0 + 550);
    assert_eq!(
        second.interval_ms, 500,
        "the answer's interval is the crawl-delay's"
    );
    // Long after the last slot, the next is now: the guard only separates slots.
    assert_eq!(state.reserve(T0 + 10_000, guarded).at, T0 + 10_000);
}
