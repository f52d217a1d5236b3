//! The lease scripts on a real `redis-server` against the pure policy they are written from
//! (`pace_policy::timetable`): renewals and reservations among lent places give the same leases,
//! slots and deferrals to the millisecond.

use std::sync::Arc;
use std::time::Duration;

use robotsd::pace_policy::{
    LendRequest, Lending, Lent, PaceState, SlotRequest, Timetable, lend, millis,
};
use robotsd::store::{RedisConfig, RedisStore, RedisTarget, SharedStore};

use crate::redis_server::RedisServer;

fn store(redis: &RedisServer) -> RedisStore {
    RedisStore::new(RedisConfig {
        target: RedisTarget::Server(redis.url()),
        password: None,
        connect_timeout: Duration::from_secs(2),
        response_timeout: Duration::from_secs(2),
        tls: None,
    })
    .unwrap()
}

fn now_ms() -> u64 {
    millis(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap(),
    )
}

#[tokio::test]
async fn the_lease_scripts_agree_with_the_policy() {
    let redis = RedisServer::start().await;
    let store = store(&redis);
    let keep = Duration::from_secs(600);
    let size = 3;
    let t0 = now_ms();
    // A renewal of each index, then one by another process: held.
    let ask = |index: u32, holder: &str, until: u64, floor: u64| LendRequest {
        index,
        holder: holder.into(),
        until,
        floor,
        fresh_from: t0 + 100,
        takeover_from: t0 + 60_000,
    };
    let mut leases = std::collections::BTreeMap::new();
    let mut table = Vec::new();
    let mut id = String::new();
    for (index, holder, until, floor) in [
        (0, "a", t0 + 10_000, 0),
        (1, "b", t0 + 10_000, 0),
        (2, "c", t0 + 4_000, 0),
        (0, "a", t0 + 10_500, 0),
        (1, "b", t0 + 10_500, t0 + 2_000),
        (1, "other", t0 + 11_000, 0),
    ] {
        let request = ask(index, holder, until, floor);
        let answer = store.lend(&request, size, keep).await.unwrap();
        if let Lending::Lent(lease) = &answer.lending {
            id = lease.store.clone();
        }
        // The store's clock is within a second of ours: the held lease's end is far from it.
        let expected = lend(leases.get(&index), now_ms(), &id, &request);
        assert_eq!(answer.lending, expected, "{request:?}");
        if let Lending::Lent(lease) = expected {
            leases.insert(index, lease);
        }
        table = answer.table;
    }
    assert_eq!(id.len(), 40, "the store's replication id: {id}");
    assert!(matches!(
        store
            .lend(&ask(1, "other", t0 + 11_000, 0), size, keep)
            .await
            .unwrap()
            .lending,
        Lending::Held { ref holder, .. } if holder == "b"
    ));
    assert_eq!(
        table.iter().map(|lent| lent.index).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    // A lease written on another store (a master that died) counts for nothing here.
    table.push(Lent {
        index: 2,
        from: 0,
        until: t0 + 60_000,
        store: "0".repeat(40),
    });
    let timetable = Arc::new(Timetable { size, lent: table });

    let mut model = PaceState::default();
    let mut seed: u64 = 0x71e;
    let mut next = |bound: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % bound
    };
    let (mut granted, mut deferred) = (0, 0);
    for step in 0..200 {
        let request = SlotRequest {
            interval_ms: [0, 100, 500, 1000][next(4) as usize],
            max_interval_ms: 60_000,
            max_wait_ms: [300, 3_000, 60_000][next(3) as usize],
            guard_ms: [0, 50][next(2) as usize],
        };
        let together = 1 + next(4) as usize;
        let grants = futures_util::future::join_all((0..together).map(|_| {
            store.reserve(
                "http://lent.test",
                request,
                keep,
                Some(Arc::clone(&timetable)),
            )
        }))
        .await;
        let mut grants: Vec<_> = grants.into_iter().map(Result::unwrap).collect();
        grants.sort_by_key(|grant| (grant.now, !grant.reserved, grant.at));
        for call in grants.chunk_by(|a, b| a.now == b.now) {
            let mut expected = model.reserve_lent_run(
                call[0].now,
                request,
                call.len() as u64,
                &timetable,
                Some(&id),
            );
            expected.sort_by_key(|grant| (grant.now, !grant.reserved, grant.at));
            assert_eq!(call, expected, "step {step}: {together} of {request:?}");
            granted += call.iter().filter(|grant| grant.reserved).count();
            deferred += call.iter().filter(|grant| !grant.reserved).count();
        }
        if next(5) == 0 {
            tokio::time::sleep(Duration::from_millis(next(400))).await;
        }
    }
    assert!(
        granted > 20 && deferred > 50,
        "{granted} granted, {deferred} deferred"
    );
}
