use std::sync::Arc;

use super::*;

type Value = Arc<str>;

fn key(value: &Value) -> &str {
    value
}

/// One shard of `bytes`, a 10 % window, room for `resting` resting entries; values whose key
/// starts with `keep` rest when evicted.
fn cache(bytes: u64, resting: u64) -> WTinyLfu<Value> {
    let capacity = Capacity {
        bytes,
        window_percent: 10,
        resting,
    };
    WTinyLfu::with_shards(capacity, 1, key, |value: &Value| {
        if value.starts_with("keep") {
            Fate::Rest
        } else {
            Fate::Forget
        }
    })
}

fn value(key: &str) -> Value {
    Arc::from(key)
}

#[test]
fn a_value_is_found_by_its_key_once_weighed_or_resting() {
    let cache = cache(10_000, 10);
    assert_eq!(cache.get("a"), None);
    cache.weigh(&value("a"), 100);
    assert_eq!(cache.get("a").as_deref(), Some("a"));
    let made = cache.get_or_rest("b", true, || value("b"));
    assert_eq!(&*made, "b");
    assert!(cache.contains("b"));
    // Resting entries are not weighed.
    assert_eq!(cache.weighed(), (1, 100));
    cache.weigh(&value("b"), 50);
    assert_eq!(cache.weighed(), (2, 150));
    // Weighed again, an entry is charged its new weight.
    cache.weigh(&value("a"), 300);
    assert_eq!(cache.weighed(), (2, 350));
    assert_eq!(cache.count(|_| true), 2);
}

#[test]
fn the_weighed_entries_never_exceed_the_capacity() {
    let cache = cache(10_000, 10);
    for n in 0..500 {
        cache.weigh(&value(&format!("k{n}")), 100 + n % 7 * 50);
        let (_, bytes) = cache.weighed();
        assert!(bytes <= 10_000, "{bytes} after {n}");
    }
    assert!(cache.weighed().0 < 500);
}

#[test]
fn a_value_heavier_than_the_window_enters_the_main_list_directly() {
    let cache = cache(10_000, 10);
    cache.weigh(&value("big"), 5_000);
    assert!(cache.contains("big"));
    assert_eq!(cache.weighed(), (1, 5_000));
    // Heavier than the main list, nothing keeps it.
    cache.weigh(&value("huge"), 9_500);
    assert!(!cache.contains("huge"));
}

#[test]
fn a_used_key_is_not_flushed_by_keys_named_once() {
    let cache = cache(10_000, 10);
    // Fill the main list with keys named once.
    for n in 0..200 {
        cache.weigh(&value(&format!("once{n}")), 100);
    }
    cache.weigh(&value("hot"), 100);
    for round in 0..50 {
        for _ in 0..3 {
            assert!(cache.get("hot").is_some(), "lost in round {round}");
        }
        // More keys named once than the whole cache holds.
        for n in 0..150 {
            let key = format!("scan{round}-{n}");
            assert!(cache.get(&key).is_none());
            cache.weigh(&value(&key), 100);
        }
    }
}

#[test]
fn a_new_key_wins_a_place_with_the_uses_it_had_in_the_window() {
    let cache = cache(10_000, 10);
    for n in 0..200 {
        let key = format!("old{n}");
        cache.get(&key);
        cache.weigh(&value(&key), 100);
    }
    cache.weigh(&value("new"), 100);
    cache.get("new");
    cache.get("new");
    // Push it out of the window (10 entries of 100 bytes).
    for n in 0..20 {
        cache.weigh(&value(&format!("later{n}")), 100);
    }
    assert!(cache.contains("new"));
}

#[test]
fn an_evicted_entry_rests_when_its_fate_says_so_and_the_resting_list_is_bounded() {
    let cache = cache(1_000, 3);
    cache.weigh(&value("keep-a"), 900);
    cache.weigh(&value("gone"), 900);
    // One of them lost its place: the one to keep rests, unweighed; the other is forgotten.
    assert_eq!(cache.weighed().0, 1);
    for n in 0..10 {
        cache.weigh(&value(&format!("keep{n}")), 900);
    }
    let resting = cache.count(|_| true) - usize::try_from(cache.weighed().0).unwrap();
    assert_eq!(resting, 3);
    // Resting entries are still found.
    let kept = (0..10)
        .map(|n| format!("keep{n}"))
        .find(|k| cache.contains(k))
        .unwrap();
    assert!(cache.get(&kept).is_some());
}

#[test]
fn weighing_a_new_value_of_a_key_replaces_the_old_one() {
    let cache = cache(10_000, 10);
    let first = value("a");
    cache.get_or_rest("a", false, || Arc::clone(&first));
    let second = value("a");
    cache.weigh(&second, 10);
    assert!(Arc::ptr_eq(&cache.get("a").unwrap(), &second));
    assert_eq!(cache.count(|_| true), 1);
}

#[test]
fn shards_are_powers_of_two_with_room_for_the_largest_values() {
    assert_eq!(shard_count(1024 * 1024), 1);
    assert_eq!(shard_count(MIN_SHARD_BYTES), 1);
    let count = shard_count(256 * 1024 * 1024);
    assert!(count.is_power_of_two() && count <= 16, "{count}");
    assert!(shard_count(u64::MAX) <= MAX_SHARDS);
}

#[test]
fn keys_spread_over_shards_and_each_is_found_in_its_own() {
    let capacity = Capacity {
        bytes: 1 << 30,
        window_percent: 5,
        resting: 1000,
    };
    let cache = WTinyLfu::with_shards(capacity, 8, key, |_: &Value| Fate::Forget);
    for n in 0..1000 {
        cache.weigh(&value(&format!("k{n}")), 100);
    }
    for n in 0..1000 {
        assert!(cache.get(&format!("k{n}")).is_some());
    }
    let used = cache
        .each_shard(|shard| shard.weighed().0)
        .filter(|&len| len > 0)
        .count();
    assert_eq!(used, 8);
}
