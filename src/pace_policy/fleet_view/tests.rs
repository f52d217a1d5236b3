use proptest::prelude::*;

use super::*;
use crate::pace_policy::{MAX_SLOWDOWN, SLOWDOWN_HALF_LIFE_MS, Signal};

const T0: u64 = 1_795_000_000_000;

fn request(interval_ms: u64, max_wait_ms: u64) -> SlotRequest {
    SlotRequest {
        interval_ms,
        max_interval_ms: 60_000,
        max_wait_ms,
        guard_ms: 50,
    }
}

#[test]
fn a_hammered_lane_is_known_to_defer_until_the_slot_the_store_would_give() {
    // The store (its clock 7 s ahead of this replica's) has handed out a minute of slots.
    let ahead = 7_000;
    let mut store = PaceState::default();
    let asked = request(1_000, 60_000);
    let mut last = store.reserve(T0 + ahead, asked);
    while last.reserved {
        last = store.reserve(T0 + ahead, asked);
    }
    // Sent at T0 - 3 (three ms before the store read its clock).
    let view = FleetView::new(&last, T0 - 3);
    let known = view.deferral(T0 + 500, asked).expect("known to defer");
    let truth = store.clone().reserve(T0 + ahead + 500, asked);
    assert!(!truth.reserved);
    assert!(!known.reserved);
    // Three ms sooner than the store's answer: the view's clock runs those three ahead.
    assert_eq!(known.at, truth.at);
    assert_eq!(known.now, truth.now + 3);
    assert_eq!(known.interval_ms, 1_000);
    assert_eq!(known.last_slot, store.last_slot);
    // Once the slot is within the longest wait again, only the store can say.
    let back = known.at - ahead - 3;
    assert!(view.deferral(back - 1, asked).is_some());
    assert!(view.deferral(back, asked).is_none());
    // An asker with a longer wait may be granted: only the store can say.
    assert!(view.deferral(T0 + 500, request(1_000, 120_000)).is_none());
}

#[test]
fn a_retry_after_defers_every_interval_and_the_slowdown_shows_decayed() {
    let mut store = PaceState::default();
    store.signal(
        T0,
        Signal::Pushback {
            retry_after_ms: Some(600_000),
        },
    );
    let grant = store.reserve(T0, request(1_000, 60_000));
    assert!(!grant.reserved);
    let view = FleetView::new(&grant, T0);
    let known = view
        .deferral(T0 + SLOWDOWN_HALF_LIFE_MS, request(0, 60_000))
        .expect("held back by the Retry-After");
    assert_eq!(known.at, T0 + 600_000 - 60_000);
    assert_eq!(known.blocked_until, T0 + 600_000);
    // ×2 a half-life ago: ×1.5 now.
    assert_eq!(known.slowdown, 1_500);
    // A view whose last slot is an interval past defers nothing.
    let fresh = PaceState::default().reserve(T0, request(1_000, 60_000));
    let view = FleetView::new(&fresh, T0);
    assert!(view.deferral(T0 + 1_000, request(1_000, 0)).is_some());
    assert!(view.deferral(T0 + 1_050, request(1_000, 0)).is_none());
}

#[test]
fn of_two_views_the_one_read_later_on_the_store_is_newer() {
    let mut store = PaceState::default();
    let first = FleetView::new(&store.reserve(T0, request(10, 60_000)), T0);
    let second = FleetView::new(&store.reserve(T0 + 1, request(10, 60_000)), T0);
    assert!(second.newer_than(&first));
    assert!(!first.newer_than(&second));
}

/// Whatever the store does after the view was read (slots by other replicas, pushbacks,
/// successes that ease the slowdown, any clock offset and any time in flight), a reservation
/// the view defers the store defers too, and asks to come back no later than the store would.
#[test]
fn what_a_view_defers_the_store_would_defer_no_sooner() {
    let asks = (0u64..5_000, 0u64..3_000, 0u64..120_000).prop_map(|(i, g, w)| SlotRequest {
        interval_ms: i,
        max_interval_ms: 60_000,
        max_wait_ms: w,
        guard_ms: g % 100,
    });
    let op = prop_oneof![
        asks.clone().prop_map(Ok),
        (0u8..3, proptest::option::of(0u64..700_000)).prop_map(Err),
    ];
    let case = (
        (
            0u64..2,
            0u64..70_000,
            0u64..70_000,
            prop_oneof![Just(UNSLOWED), UNSLOWED..MAX_SLOWDOWN],
        ),
        (0u64..10_000_000, 0u64..500),
        asks.clone(),
        prop_oneof![
            Just(Vec::new()),
            proptest::collection::vec((0u64..5_000, op), 0..40)
        ],
        (
            0u64..20_000,
            asks.prop_map(|ask| SlotRequest {
                max_wait_ms: ask.max_wait_ms / 4,
                ..ask
            }),
        ),
    );
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let known = std::cell::Cell::new(0);
    runner
        .run(
            &case,
            |(start, (ahead, lag), first, ops, (after, asked))| {
                let (has_last, last, blocked, slowdown) = start;
                let sent = T0;
                let mut clock = T0 + ahead + lag;
                let mut store = PaceState {
                    last_slot: if has_last == 1 {
                        clock - 30_000 + last
                    } else {
                        0
                    },
                    blocked_until: if blocked > 35_000 {
                        clock - 35_000 + blocked
                    } else {
                        0
                    },
                    slowdown,
                    slowdown_at: clock - 1_000,
                };
                let view = FleetView::new(&store.reserve(clock, first), sent);
                for (step, op) in ops {
                    clock += step;
                    match op {
                        Ok(request) => {
                            store.reserve(clock, request);
                        }
                        Err((kind, retry_after_ms)) => store.signal(
                            clock,
                            match kind {
                                0 => Signal::Success,
                                1 => Signal::Slow,
                                _ => Signal::Pushback { retry_after_ms },
                            },
                        ),
                    }
                }
                clock += after;
                // This replica's now, when the store's is `clock`.
                let now = clock - ahead;
                if let Some(deferral) = view.deferral(now, asked) {
                    known.set(known.get() + 1);
                    let truth = store.clone().reserve(clock, asked);
                    prop_assert!(!truth.reserved, "{deferral:?} {truth:?}");
                    prop_assert!(deferral.at <= truth.at, "{deferral:?} {truth:?}");
                    prop_assert!(deferral.now >= clock);
                }
                Ok(())
            },
        )
        .unwrap();
    // The property is not met by deferring nothing.
    assert!(known.get() > 20, "{} deferrals known", known.get());
}
