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

#[test]
fn a_fleet_share_is_one_of_size_replicas() {
    assert_eq!(FleetShare::new(0, None), Err(FleetShareError::Empty));
    assert_eq!(
        FleetShare::new(3, Some(3)),
        Err(FleetShareError::IndexOutside { index: 3, size: 3 })
    );
    let share = FleetShare::new(3, Some(2)).unwrap();
    assert_eq!((share.size(), share.index()), (3, Some(2)));
    assert_eq!(FleetShare::default(), FleetShare::WHOLE);
    assert_eq!(FleetShare::new(1, None), Ok(FleetShare::WHOLE));
}

#[test]
fn alone_as_one_of_three_a_replica_keeps_a_third_of_the_rate() {
    let share = FleetShare::new(3, None).unwrap();
    let guarded = SlotRequest {
        guard_ms: 50,
        ..request(500)
    };
    let mut state = PaceState::default();
    assert_eq!(state.reserve_share(T0, guarded, share, 0).at, T0);
    // Three periods of the interval and the guard band: the fleet's rate over three replicas.
    let second = state.reserve_share(T0, guarded, share, 0);
    assert_eq!(second.at, T0 + 3 * 550);
    assert_eq!(
        second.interval_ms, 500,
        "the answer's interval is the site's"
    );
    // A whole share is the fleet's own rule.
    let mut whole = PaceState::default();
    let mut fleet = PaceState::default();
    for now in [T0, T0, T0 + 100, T0 + 5_000] {
        assert_eq!(
            whole.reserve_share(now, guarded, FleetShare::WHOLE, 0),
            fleet.reserve(now, guarded)
        );
    }
}

#[test]
fn with_an_index_each_replica_keeps_its_own_phase() {
    // A grid of 550 ms periods from the epoch, in cycles of three.
    let period = 550;
    let cycle = 3 * period;
    let guarded = SlotRequest {
        guard_ms: 50,
        ..request(500)
    };
    for index in 0..3 {
        let share = FleetShare::new(3, Some(index)).unwrap();
        let mut state = PaceState::default();
        let first = state.reserve_share(T0, guarded, share, 0);
        assert!(first.at >= T0 && first.at < T0 + cycle, "{first:?}");
        assert_eq!(first.at % cycle, u64::from(index) * period, "{first:?}");
        let second = state.reserve_share(first.at, guarded, share, 0);
        assert_eq!(second.at, first.at + cycle);
    }
    // A Retry-After moves the slot to the first of the replica's phase after it.
    let share = FleetShare::new(3, Some(1)).unwrap();
    let mut state = PaceState::default();
    state.signal(
        T0,
        Signal::Pushback {
            retry_after_ms: Some(10_000),
        },
    );
    let held = state.reserve_share(T0, guarded, share, 0);
    // Slowed down twice by the pushback: the period is the doubled interval and the band.
    let slowed = held.interval_ms + 50;
    assert_eq!(slowed, 1050);
    assert!(
        held.at >= T0 + 10_000 && held.at < T0 + 10_000 + 3 * slowed,
        "{held:?}"
    );
    assert_eq!(held.at % (3 * slowed), slowed, "{held:?}");
}

/// Three replicas deciding alone, each with its own index and its own state, asked at random
/// times: at the site, no two slots closer than a period, and each replica's a third of the rate.
#[test]
fn replicas_alone_with_their_indices_never_hand_out_two_slots_closer_than_a_period() {
    use proptest::prelude::*;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let asks = proptest::collection::vec((0usize..3, 0u64..2_000), 1..200);
    runner
        .run(&asks, |asks| {
            let guarded = SlotRequest {
                guard_ms: 50,
                max_wait_ms: 5_000,
                ..request(500)
            };
            let mut states = [PaceState::default(); 3];
            let mut now = T0;
            let mut slots: Vec<(u64, usize)> = Vec::new();
            for (replica, step) in asks {
                now += step;
                let share = FleetShare::new(3, Some(replica as u32)).unwrap();
                let grant = states[replica].reserve_share(now, guarded, share, 0);
                prop_assert!(grant.at >= now);
                if grant.reserved {
                    slots.push((grant.at, replica));
                } else {
                    // Deferred: asked again then, the slot is within the longest wait.
                    prop_assert!(grant.at > now);
                }
            }
            slots.sort();
            for pair in slots.windows(2) {
                prop_assert!(pair[1].0 - pair[0].0 >= 550, "{pair:?}");
            }
            for replica in 0..3 {
                let own: Vec<u64> = slots
                    .iter()
                    .filter(|s| s.1 == replica)
                    .map(|s| s.0)
                    .collect();
                for pair in own.windows(2) {
                    prop_assert!(pair[1] - pair[0] >= 3 * 550, "{pair:?}");
                }
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn a_slow_site_grows_the_slowdown_by_half_capped_and_decaying() {
    let mut state = PaceState::default();
    state.signal(T0, Signal::Slow);
    assert_eq!(state.slowdown_at(T0), 1500);
    state.signal(T0, Signal::Slow);
    assert_eq!(state.slowdown_at(T0), 2250);
    // No Retry-After: nothing is blocked.
    assert_eq!(state.blocked_until, 0);
    // Decays as a pushback's does: the excess halves each half-life.
    assert_eq!(state.slowdown_at(T0 + SLOWDOWN_HALF_LIFE_MS), 1625);
    for _ in 0..40 {
        state.signal(T0, Signal::Slow);
    }
    assert_eq!(state.slowdown_at(T0), MAX_SLOWDOWN);
}
