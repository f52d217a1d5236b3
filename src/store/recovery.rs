//! Recovery without traffic (docs/fleet.md): from the first call that fails, one background task
//! per store pings it on a timer that backs off from 250 ms to 2 s, and closes the breaker as soon
//! as it answers. A replica then learns that Redis is back within about two seconds even when
//! no check arrives, so `robotsd_store_up` tells the truth and the first checks after the
//! outage share through the store again instead of each replica fetching alone.
//!
//! The breaker's own half-open probe stays: a check after the cooldown still tries the store
//! once. Together they never send more than one probe at a time from the background and one
//! from traffic, so a recovering Redis is not stampeded, and the breaker closes for everyone at
//! once when either succeeds.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::{Store, StoreOp, StoreOutcome};

/// The waits between background probes: quick at first, for a short blip, then every 2 s.
const PROBE_WAITS: [Duration; 4] = [
    Duration::from_millis(250),
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
];

impl Store {
    /// Starts the background probe unless it runs already; it ends when the breaker closes.
    pub(super) fn recover_in_background(&self) {
        if self.recovering.swap(true, Ordering::AcqRel) {
            return;
        }
        // Only reached from a store call, which runs on the runtime; outside one (never in
        // robotsd), the breaker's half-open probe is still there.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.recovering.store(false, Ordering::Release);
            return;
        };
        let store = self.clone();
        runtime.spawn(async move {
            let mut attempt = 0;
            while !store.is_up() {
                tokio::time::sleep(PROBE_WAITS[attempt.min(PROBE_WAITS.len() - 1)]).await;
                attempt += 1;
                if store.is_up() {
                    break;
                }
                let started = tokio::time::Instant::now();
                let outcome =
                    match tokio::time::timeout(store.settings.timeout, store.inner.ping()).await {
                        Ok(Ok(())) => StoreOutcome::Ok,
                        Ok(Err(_)) => StoreOutcome::Error,
                        Err(_) => StoreOutcome::Timeout,
                    };
                store.observe(StoreOp::Probe, outcome, started.elapsed());
                if outcome == StoreOutcome::Ok {
                    store.lock_breaker().success();
                    store.answered(StoreOp::Probe, None);
                }
            }
            store.recovering.store(false, Ordering::Release);
            // A failure between the last check and the flag's reset would have found the probe
            // running and not started one: look once more.
            if !store.is_up() {
                store.recover_in_background();
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    use futures_util::future::{BoxFuture, FutureExt as _};

    use super::*;
    use crate::clock::TokioClock;
    use crate::pace_policy::{LendRequest, Lending, Signal, SlotGrant, SlotRequest, Timetable};
    use crate::store::{
        BodyWrite, Encoded, Lease, LendAnswer, Looked, PaceReading, SharedStore, StoreError,
        StoreSettings,
    };

    /// A store that fails every call until it is switched back on.
    #[derive(Debug, Default)]
    struct Switch {
        up: AtomicBool,
        pings: std::sync::atomic::AtomicUsize,
    }

    impl Switch {
        fn answer<T: Send + 'static>(&self, value: T) -> BoxFuture<'_, Result<T, StoreError>> {
            let up = self.up.load(Ordering::Acquire);
            async move {
                if up {
                    Ok(value)
                } else {
                    Err(StoreError::Failed("connection refused".into()))
                }
            }
            .boxed()
        }
    }

    impl SharedStore for Switch {
        fn load<'a>(
            &'a self,
            _: &'a str,
            _: usize,
        ) -> BoxFuture<'a, Result<Option<Encoded>, StoreError>> {
            self.answer(None)
        }
        fn save<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            _: &'a [u8],
            _: &'a BodyWrite,
            _: Duration,
            _: Option<&'a str>,
        ) -> BoxFuture<'a, Result<(), StoreError>> {
            self.answer(())
        }
        fn try_lease<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            _: Duration,
            _: usize,
        ) -> BoxFuture<'a, Result<Lease<Encoded>, StoreError>> {
            self.answer(Lease::Taken(None))
        }
        fn load_or_lease<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            _: Duration,
            _: usize,
        ) -> BoxFuture<'a, Result<Looked<Encoded>, StoreError>> {
            self.answer(Looked::Leased)
        }
        fn release<'a>(&'a self, _: &'a str, _: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
            self.answer(())
        }
        fn lend<'a>(
            &'a self,
            _: &'a LendRequest,
            _: u32,
            _: Duration,
        ) -> BoxFuture<'a, Result<LendAnswer, StoreError>> {
            self.answer(LendAnswer {
                lending: Lending::Held {
                    holder: String::new(),
                    until: 0,
                },
                table: Vec::new(),
            })
        }
        fn reserve<'a>(
            &'a self,
            _: &'a str,
            _: SlotRequest,
            _: Duration,
            _: Option<Arc<Timetable>>,
        ) -> BoxFuture<'a, Result<SlotGrant, StoreError>> {
            self.answer(SlotGrant {
                reserved: true,
                at: 0,
                now: 0,
                interval_ms: 0,
                slowdown: 1000,
                blocked_until: 0,
                last_slot: 0,
            })
        }
        fn signal<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            _: Signal,
            _: Duration,
        ) -> BoxFuture<'a, Result<Option<PaceReading>, StoreError>> {
            self.answer(Some(PaceReading {
                state: Default::default(),
                now: 0,
            }))
        }
        fn pace<'a>(
            &'a self,
            _: &'a str,
        ) -> BoxFuture<'a, Result<Option<PaceReading>, StoreError>> {
            self.answer(None)
        }
        fn ping(&self) -> BoxFuture<'_, Result<(), StoreError>> {
            self.pings.fetch_add(1, Ordering::Relaxed);
            self.answer(())
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_breaker_closes_by_itself_soon_after_the_store_answers_again() {
        let switch = Arc::new(Switch::default());
        let settings = StoreSettings::default();
        let store = Store::new(
            switch.clone(),
            settings.clone(),
            Arc::new(TokioClock::new()),
        );
        for _ in 0..settings.breaker_threshold {
            let _ = store.load("https://example.com", 1024).await;
        }
        assert!(!store.is_up());
        // Down for a minute, with no traffic: probes every 2 s at most, one at a time.
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert!(!store.is_up());
        let pings = switch.pings.load(Ordering::Relaxed);
        assert!((28..=34).contains(&pings), "{pings} probes in a minute");
        // Back: within the longest wait between probes, the breaker is closed, with no traffic.
        switch.up.store(true, Ordering::Release);
        tokio::time::sleep(Duration::from_millis(2100)).await;
        assert!(store.is_up());
        assert!(!store.recovering.load(Ordering::Acquire), "the probe ended");
        // Down again: a new probe starts.
        switch.up.store(false, Ordering::Release);
        for _ in 0..settings.breaker_threshold {
            let _ = store.load("https://example.com", 1024).await;
        }
        assert!(!store.is_up());
        switch.up.store(true, Ordering::Release);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(store.is_up());
    }
}
