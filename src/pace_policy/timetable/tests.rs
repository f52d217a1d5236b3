use std::collections::HashMap;

use proptest::prelude::*;

use super::*;
use crate::pace_policy::{FleetShare, Lender};

const T0: u64 = 1_795_000_000_000;
const SIZE: u32 = 3;

fn request() -> SlotRequest {
    SlotRequest {
        interval_ms: 500,
        max_interval_ms: 60_000,
        max_wait_ms: 15_000,
        guard_ms: 50,
    }
}

#[test]
fn the_store_hands_out_only_lent_places_on_the_grid() {
    let period = 550;
    let lent = |index, from, until| Lent {
        index,
        from,
        until,
        store: "a".into(),
    };
    // Replica 1 lends nothing: its places are skipped.
    let table = Timetable {
        size: SIZE,
        lent: vec![lent(0, 0, T0 + 10_000), lent(2, 0, T0 + 10_000)],
    };
    let base = T0 - T0 % (3 * period);
    let mut state = PaceState::default();
    let slots: Vec<u64> = (0..4)
        .map(|_| state.reserve_lent(base, request(), &table, Some("a")).at - base)
        .collect();
    assert_eq!(slots, [0, 2 * period, 3 * period, 5 * period]);
    // A lease of another store counts for nothing there.
    let mut state = PaceState::default();
    let grant = state.reserve_lent(base, request(), &table, Some("b"));
    assert!(!grant.reserved);
    assert_eq!(grant.at, base + RENEW_MS, "ask again a renewal later");
    // Beyond the end of a lease that is renewed, a deferral until the renewed lease reaches
    // the place; the place of a lease not renewed for half its length is skipped.
    let short = Timetable {
        size: SIZE,
        lent: vec![lent(0, 0, base + 5_000), lent(1, 0, base + 4_000)],
    };
    let mut state = PaceState {
        last_slot: base + 9 * period,
        ..PaceState::default()
    };
    let grant = state.reserve_lent(base, request(), &short, None);
    assert!(!grant.reserved);
    assert_eq!(grant.at, base + 12 * period - 5_000 + 1);
}

#[test]
fn a_renewal_keeps_a_lease_refuses_a_live_other_and_starts_afresh_on_a_store_that_forgot() {
    let ask = |holder: &str, until, floor, fresh_from| LendRequest {
        index: 1,
        holder: holder.into(),
        until,
        floor,
        fresh_from,
        takeover_from: T0 + 60_000,
    };
    let lease = |holder: &str, store: &str, from, until| Lease {
        holder: holder.into(),
        store: store.into(),
        from,
        until,
    };
    let held = lease("p", "a", T0, T0 + 10_000);
    // Renewed: the start stays unless a place was used alone since.
    assert_eq!(
        lend(Some(&held), T0, "a", &ask("p", T0 + 10_500, 0, 9)),
        Lending::Lent(lease("p", "a", T0, T0 + 10_500))
    );
    assert_eq!(
        lend(Some(&held), T0, "a", &ask("p", T0 + 10_500, T0 + 12_000, 9)),
        Lending::Lent(lease("p", "a", T0 + 12_000, T0 + 10_500))
    );
    // Another live process holds it.
    assert_eq!(
        lend(Some(&held), T0, "a", &ask("q", T0 + 10_500, 0, 9)),
        Lending::Held {
            holder: "p".into(),
            until: T0 + 10_000
        }
    );
    // Its lease ended: taken over past the longest wait.
    assert_eq!(
        lend(Some(&held), T0 + 10_001, "a", &ask("q", T0 + 20_000, 0, 9)),
        Lending::Lent(lease("q", "a", T0 + 60_000, T0 + 20_000))
    );
    // A store that forgot (promoted, or empty): past every end this process asked for.
    assert_eq!(
        lend(Some(&held), T0, "b", &ask("p", T0 + 10_500, 0, T0 + 10_400)),
        Lending::Lent(lease("p", "b", T0 + 10_400, T0 + 10_500))
    );
    assert_eq!(
        lend(None, T0, "b", &ask("p", T0 + 10_500, 0, T0 + 10_400)),
        Lending::Lent(lease("p", "b", T0 + 10_400, T0 + 10_500))
    );
}

/// What can happen to the fleet in a step.
#[derive(Debug, Clone)]
enum Event {
    /// Time passes.
    Wait(u64),
    /// A replica renews its lease; the answer is lost when `lost`.
    Renew { replica: usize, lost: bool },
    /// A replica reserves a slot (from the store when it reaches it, else alone).
    Reserve(usize),
    /// A replica is cut off from the store, or reaches it again.
    Cut(usize),
    /// The store's replica copies what the master has (replication catches up).
    Replicate,
    /// The store dies, and comes back empty.
    Restart,
    /// The store's replica, perhaps behind, is promoted.
    Failover,
    /// The store is down, or up again (with what it had).
    Down,
    /// A replica's process restarts (when it holds no place ahead used alone).
    RestartReplica(usize),
}

fn event() -> impl Strategy<Value = Event> {
    let replica = 0..SIZE as usize;
    prop_oneof![
        6 => (0u64..700).prop_map(Event::Wait),
        5 => (replica.clone(), proptest::bool::weighted(0.2))
            .prop_map(|(replica, lost)| Event::Renew { replica, lost }),
        8 => replica.clone().prop_map(Event::Reserve),
        1 => replica.clone().prop_map(Event::Cut),
        2 => Just(Event::Replicate),
        1 => Just(Event::Restart),
        1 => Just(Event::Failover),
        1 => Just(Event::Down),
        1 => replica.prop_map(Event::RestartReplica),
    ]
}

#[derive(Debug, Clone)]
struct Master {
    id: String,
    lane: PaceState,
    leases: HashMap<u32, Lease>,
}

struct Replica {
    lender: Lender,
    local: PaceState,
    cut: bool,
    runs: u32,
}

fn replica(index: usize, runs: u32, now: u64) -> Replica {
    Replica {
        lender: Lender::new(index as u32, SIZE, format!("r{index}-{runs}"), now),
        local: PaceState::default(),
        cut: false,
        runs,
    }
}

/// A new store, empty, with an identity of its own.
fn fresh(stores: &mut u32) -> Master {
    *stores += 1;
    Master {
        id: format!("s{stores}"),
        lane: PaceState::default(),
        leases: HashMap::new(),
    }
}

/// Every slot granted in a run of events, by the store or a replica alone.
fn run(events: &[Event]) -> Vec<(u64, String)> {
    let request = request();
    let mut now = T0;
    let mut stores = 0;
    let mut master = Some(fresh(&mut stores));
    let mut down = false;
    let mut copy = master.clone();
    let mut replicas: Vec<Replica> = (0..SIZE as usize).map(|i| replica(i, 0, now)).collect();
    let mut slots = Vec::new();
    for event in events {
        match event {
            Event::Wait(ms) => now += ms,
            Event::Renew { replica, lost } => {
                let r = &mut replicas[*replica];
                // A replica that knows it is cut off sends nothing (and asks for nothing);
                // one that does not know sends, and its renewal is lost.
                if (r.cut || down) && *lost {
                    continue;
                }
                let ask = r.lender.request(now, request.max_wait_ms);
                if let (Some(m), false, false) = (master.as_mut(), down, r.cut) {
                    let lending = lend(m.leases.get(&ask.index), now, &m.id, &ask);
                    if let Lending::Lent(lease) = &lending {
                        m.leases.insert(ask.index, lease.clone());
                    }
                    if !lost {
                        let table = m
                            .leases
                            .iter()
                            .map(|(&index, lease)| lease.lent(index))
                            .collect();
                        r.lender.answered(&lending, table);
                    }
                }
            }
            Event::Reserve(i) => {
                let r = &mut replicas[*i];
                let grant = match (master.as_mut(), down, r.cut) {
                    (Some(m), false, false) => {
                        let table = r.lender.timetable();
                        let grant = m.lane.reserve_lent(now, request, &table, Some(&m.id));
                        if grant.reserved {
                            r.local.last_slot = r.local.last_slot.max(grant.at);
                            slots.push((grant.at, format!("store {} for r{i}", m.id)));
                        }
                        grant
                    }
                    _ => {
                        let Some(floor) = r.lender.floor() else {
                            continue;
                        };
                        let share = FleetShare::new(SIZE, Some(*i as u32)).unwrap();
                        let grant = r.local.reserve_share(now, request, share, floor);
                        if grant.reserved {
                            r.lender.used_alone(grant.at);
                            slots.push((grant.at, format!("r{i} alone (run {})", r.runs)));
                        }
                        grant
                    }
                };
                assert!(!grant.reserved || grant.at >= now);
            }
            Event::Cut(i) => replicas[*i].cut = !replicas[*i].cut,
            Event::Replicate => copy = master.clone(),
            Event::Restart => {
                master = Some(fresh(&mut stores));
                copy = master.clone();
            }
            Event::Failover => {
                master = copy.clone().map(|mut m| {
                    stores += 1;
                    m.id = format!("s{stores}");
                    m
                });
                if master.is_none() {
                    master = Some(fresh(&mut stores));
                }
                copy = master.clone();
            }
            Event::Down => down = !down,
            Event::RestartReplica(i) => {
                // A process that dies holding places ahead it used alone takes them with it;
                // its next run cannot know them (docs/politeness.md says so).
                let r = &replicas[*i];
                if r.local.last_slot < now {
                    let runs = r.runs + 1;
                    replicas[*i] = replica(*i, runs, now);
                }
            }
        }
    }
    slots
}

/// No two slots of the lane closer than a period, whoever handed them out, through any
/// sequence of cuts, deaths, empty restarts, failovers that lose writes and lost answers.
#[test]
fn no_two_slots_closer_than_a_period_through_every_transition() {
    let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases: 400,
        ..proptest::test_runner::Config::default()
    });
    let period = request().interval_ms + request().guard_ms;
    let granted = std::sync::atomic::AtomicUsize::new(0);
    runner
        .run(&proptest::collection::vec(event(), 50..400), |events| {
            let mut slots = run(&events);
            granted.fetch_add(slots.len(), std::sync::atomic::Ordering::Relaxed);
            slots.sort();
            for pair in slots.windows(2) {
                prop_assert!(
                    pair[1].0 - pair[0].0 >= period,
                    "{:?} and {:?} are {} ms apart",
                    pair[0],
                    pair[1],
                    pair[1].0 - pair[0].0
                );
            }
            Ok(())
        })
        .unwrap();
    // The run is not vacuous: slots were granted, by the store and alone.
    assert!(granted.into_inner() > 10_000);
}

/// Everything up: the fleet keeps one slot a period at the site, as the store alone did.
#[test]
fn with_everything_up_the_fleet_keeps_the_site_s_rate() {
    let mut events = Vec::new();
    for round in 0..200 {
        for replica in 0..SIZE as usize {
            events.push(Event::Renew {
                replica,
                lost: false,
            });
            events.push(Event::Reserve(replica));
        }
        if round % 4 == 3 {
            events.push(Event::Wait(550 * 4));
        }
    }
    // Past the start floor (a lease's length), then 600 reservations.
    let mut warm = vec![Event::Wait(LEASE_MS)];
    warm.extend(events);
    let slots = run(&warm);
    let first = slots.first().unwrap().0;
    let last = slots.last().unwrap().0;
    let rate = (slots.len() - 1) as f64 * 550.0 / (last - first) as f64;
    assert!(rate >= 0.9, "{} slots, {rate:.3} a period", slots.len());
}
