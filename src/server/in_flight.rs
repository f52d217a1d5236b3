//! The concurrency limit (`--concurrency-limit`): requests in flight on the guarded routes,
//! counted without a lock. A request over the limit is shed at once, never queued, so nothing
//! ever waits for a place; tokio's `Semaphore` would take its waiters' lock to give each
//! permit back (about 100 instructions a request) for waiters that never exist.

use std::sync::atomic::{AtomicUsize, Ordering};

/// At most `max` requests in flight.
#[derive(Debug)]
pub struct InFlight {
    max: usize,
    held: AtomicUsize,
}

/// One request's place, given back when dropped.
#[derive(Debug)]
pub struct Place<'a>(&'a InFlight);

impl InFlight {
    /// A limit of `max` requests at once.
    pub fn new(max: usize) -> InFlight {
        InFlight {
            max,
            held: AtomicUsize::new(0),
        }
    }

    /// A place, or `None` when `max` are taken.
    pub fn try_take(&self) -> Option<Place<'_>> {
        let mut held = self.held.load(Ordering::Relaxed);
        loop {
            if held >= self.max {
                return None;
            }
            match self.held.compare_exchange_weak(
                held,
                held + 1,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(Place(self)),
                Err(now) => held = now,
            }
        }
    }

    /// Places taken now.
    #[cfg(test)]
    fn taken(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        self.0.held.fetch_sub(1, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    use super::*;

    #[test]
    fn places_up_to_the_limit_and_back() {
        let limit = InFlight::new(2);
        let a = limit.try_take().expect("first");
        let b = limit.try_take().expect("second");
        assert!(limit.try_take().is_none(), "over the limit");
        drop(a);
        let c = limit.try_take().expect("one given back");
        assert!(limit.try_take().is_none());
        drop((b, c));
        assert_eq!(limit.taken(), 0);
        assert!(
            InFlight::new(0).try_take().is_none(),
            "a limit of none sheds all"
        );
    }

    #[test]
    fn threads_never_hold_more_than_the_limit() {
        let limit = Arc::new(InFlight::new(3));
        let over = Arc::new(AtomicBool::new(false));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (limit, over) = (Arc::clone(&limit), Arc::clone(&over));
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        if let Some(place) = limit.try_take() {
                            if limit.taken() > 3 {
                                over.store(true, Ordering::Relaxed);
                            }
                            drop(place);
                        }
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert!(!over.load(Ordering::Relaxed));
        assert_eq!(limit.taken(), 0);
    }
}
