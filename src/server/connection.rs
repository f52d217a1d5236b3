//! One client connection's clock: when it last went quiet, when its current request head
//! started, and how many of its requests are in flight; and the watchdog that closes it when a
//! head takes too long (`--header-read-timeout`) or it sits idle (`--idle-timeout`).
//!
//! hyper has one timer of its own for this, but it starts when hyper begins waiting for a head,
//! which on a keep-alive connection is the moment the previous response went out: an idle
//! connection and a slow head would share one limit. Here a head's clock starts at its first
//! byte, so an idle keep-alive connection can be given a minute while a head gets seconds.
//! The bytes are seen by [`Watched`], the socket wrapper, and requests by the connection's
//! service, which holds a [`Busy`] while one is in flight.
//!
//! Neither reads the clock: they mark that a head started or that the connection went quiet,
//! and the watchdog, which reads the clock each time it looks anyway, stamps the mark with the
//! time it first sees it. A request thereby pays no clock read for its connection's timers
//! (two a request were about 230 of a cached check's instructions), and a limit runs from at
//! most one look (a quarter of the header timeout) after the event: never less than the limit,
//! at most a quarter more.
//!
//! For HTTP/2 any frame read while no stream is open starts the head clock, so a connection
//! that sends only pings is closed after the header timeout rather than the idle one.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
// tokio's, so that tests can pause time; it is std's `Instant` otherwise.
use tokio::time::Instant;

use super::head_errors::{HeadErrors, Rewrite};

/// No head started since the connection last went quiet.
const NONE: u64 = 0;

/// The event happened and the watchdog has not looked since: it takes the time it looks.
const UNSTAMPED: u64 = u64::MAX;

/// What a connection is doing, shared by its socket, its service and its watchdog.
#[derive(Debug)]
pub(super) struct Activity {
    /// When the connection was accepted; every other time is milliseconds since, plus one, so
    /// that zero can mean "none".
    epoch: Instant,
    /// Requests whose response is not produced yet.
    busy: AtomicU32,
    /// When the connection last had no request in flight (its start, or the end of the last),
    /// or [`UNSTAMPED`].
    quiet_since: AtomicU64,
    /// When the first byte of the current head arrived, [`UNSTAMPED`], or [`NONE`].
    head_since: AtomicU64,
}

/// Why the watchdog closed a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Expired {
    /// A request head was started and not finished in time.
    Header,
    /// Nothing was sent on a connection without a request in flight.
    Idle,
}

impl Activity {
    /// A connection accepted now.
    pub(super) fn new() -> Arc<Activity> {
        Arc::new(Activity {
            epoch: Instant::now(),
            busy: AtomicU32::new(0),
            quiet_since: AtomicU64::new(1),
            head_since: AtomicU64::new(NONE),
        })
    }

    /// `at` as a stamp: milliseconds since the epoch, plus one.
    fn stamp(&self, at: Instant) -> u64 {
        let millis = at.saturating_duration_since(self.epoch).as_millis();
        u64::try_from(millis).unwrap_or(UNSTAMPED - 2) + 1
    }

    fn at(&self, stamp: u64) -> Instant {
        self.epoch + Duration::from_millis(stamp.saturating_sub(1))
    }

    /// Bytes arrived: with no request in flight, they are the start of a head.
    fn bytes_read(&self) {
        if self.busy.load(Ordering::Relaxed) == 0 && self.head_since.load(Ordering::Relaxed) == NONE
        {
            self.head_since.store(UNSTAMPED, Ordering::Relaxed);
        }
    }

    /// A request's head is in and its service starts; the returned guard ends it.
    pub(super) fn begin(self: &Arc<Self>) -> Busy {
        self.busy.fetch_add(1, Ordering::Relaxed);
        self.head_since.store(NONE, Ordering::Relaxed);
        Busy(Arc::clone(self))
    }

    /// When the connection expires if nothing changes, and why, as seen at `now` (which stamps
    /// what happened since the last look); `None` while a request is in flight (the request's
    /// own limits bound it).
    fn deadline(
        &self,
        now: Instant,
        header: Duration,
        idle: Duration,
    ) -> Option<(Instant, Expired)> {
        if self.busy.load(Ordering::Relaxed) > 0 {
            return None;
        }
        match self.stamped(&self.head_since, now) {
            NONE => Some((
                self.at(self.stamped(&self.quiet_since, now)) + idle,
                Expired::Idle,
            )),
            started => Some((self.at(started) + header, Expired::Header)),
        }
    }

    /// The stamp in `field`, taking `now` for one not stamped yet. A request that begins or
    /// ends meanwhile wins: its mark is newer than this look.
    fn stamped(&self, field: &AtomicU64, now: Instant) -> u64 {
        let now = self.stamp(now);
        match field.compare_exchange(UNSTAMPED, now, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => now,
            Err(current) => current,
        }
    }
}

/// One request in flight on a connection; dropping it (response produced, or request dropped)
/// makes the connection quiet again if it was the last.
#[derive(Debug)]
pub(super) struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        let activity = &self.0;
        if activity.busy.fetch_sub(1, Ordering::Relaxed) == 1 {
            activity.quiet_since.store(UNSTAMPED, Ordering::Relaxed);
        }
    }
}

/// Waits for the task serving a connection to end, or ends it (aborting the task drops the
/// connection) when `activity` passes a deadline; says which one did.
///
/// It runs as a task of its own beside the connection's, woken only by its timer and by the
/// connection's end, so the requests on the connection pay nothing for it.
pub(super) async fn watch<T>(
    mut connection: tokio::task::JoinHandle<T>,
    activity: &Activity,
    header_timeout: Duration,
    idle_timeout: Duration,
) -> Option<Expired> {
    // Nothing wakes the watchdog when a head starts (a wake-up per request would cost more than
    // the check), so it looks this often: a head is closed within a quarter more than its limit.
    let recheck = (header_timeout / 4).max(Duration::from_millis(1));
    let mut sleep = std::pin::pin!(tokio::time::sleep(recheck));
    loop {
        let now = Instant::now();
        let at = match activity.deadline(now, header_timeout, idle_timeout) {
            Some((at, why)) if at <= now => {
                connection.abort();
                return Some(why);
            }
            Some((at, _)) => at.min(now + recheck),
            None => now + recheck,
        };
        sleep.as_mut().reset(at);
        tokio::select! {
            biased;
            _ = &mut connection => return None,
            () = sleep.as_mut() => {}
        }
    }
}

/// A client socket that reports the bytes it reads to the connection's [`Activity`], and turns
/// hyper's bodiless automatic error responses into problem details ([`HeadErrors`]).
pub(super) struct Watched<T> {
    io: T,
    activity: Arc<Activity>,
    errors: HeadErrors,
    /// A replacement being written, and the length of what it replaces.
    rewriting: Option<(Rewrite, usize)>,
}

impl<T> Watched<T> {
    /// Wraps `io`, accepted now.
    pub(super) fn new(io: T, activity: Arc<Activity>, errors: HeadErrors) -> Watched<T> {
        Watched {
            io,
            activity,
            errors,
            rewriting: None,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Watched<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.activity.bytes_read();
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> Watched<T> {
    /// Writes the replacement in progress to the end, then reports `replaced` bytes written.
    fn poll_rewrite(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let Some((rewrite, replaced)) = &mut self.rewriting else {
            return Poll::Ready(Ok(0));
        };
        while !rewrite.is_done() {
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, rewrite.remaining()))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            rewrite.advance(n);
        }
        let replaced = *replaced;
        self.rewriting = None;
        Poll::Ready(Ok(replaced))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Watched<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.rewriting.is_none() {
            match this.errors.rewrite(buf) {
                Some(rewrite) => this.rewriting = Some((rewrite, buf.len())),
                None => return Pin::new(&mut this.io).poll_write(cx, buf),
            }
        }
        this.poll_rewrite(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        // hyper's automatic responses are a head alone: one slice, nothing after it.
        let mut slices = bufs.iter().filter(|slice| !slice.is_empty());
        if let (Some(only), None) = (slices.next(), slices.next())
            && (this.rewriting.is_some() || this.errors.rewrite(only).is_some())
        {
            return Pin::new(this).poll_write(cx, only);
        }
        Pin::new(&mut this.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: Duration = Duration::from_secs(10);
    const IDLE: Duration = Duration::from_secs(60);

    /// A connection task that never ends by itself.
    fn pending() -> tokio::task::JoinHandle<()> {
        tokio::spawn(std::future::pending())
    }

    /// Within the millisecond the activity's times are kept in.
    fn near(a: Instant, b: Instant) -> bool {
        a.max(b) - a.min(b) <= Duration::from_millis(2)
    }

    /// The activity's deadline as the watchdog sees it now.
    fn deadline_now(activity: &Activity) -> Option<(Instant, Expired)> {
        activity.deadline(Instant::now(), HEADER, IDLE)
    }

    #[tokio::test(start_paused = true)]
    async fn idle_then_head_then_busy_then_idle_again() {
        let activity = Activity::new();
        let (at, why) = deadline_now(&activity).unwrap();
        assert_eq!(why, Expired::Idle);
        assert!(at >= activity.epoch + IDLE - Duration::from_millis(1));

        tokio::time::sleep(Duration::from_secs(30)).await;
        activity.bytes_read();
        let (at, why) = deadline_now(&activity).unwrap();
        assert_eq!(why, Expired::Header);
        let expected = activity.epoch + Duration::from_secs(30) + HEADER;
        assert!(near(at, expected), "{at:?} vs {expected:?}");

        let busy = activity.begin();
        assert_eq!(deadline_now(&activity), None);
        // Body bytes read while busy do not start a head.
        activity.bytes_read();
        tokio::time::sleep(Duration::from_secs(5)).await;
        drop(busy);
        let (at, why) = deadline_now(&activity).unwrap();
        assert_eq!(why, Expired::Idle);
        let expected = activity.epoch + Duration::from_secs(35) + IDLE;
        assert!(near(at, expected), "{at:?} vs {expected:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn an_event_is_stamped_when_the_watchdog_first_sees_it_and_kept() {
        let activity = Activity::new();
        tokio::time::sleep(Duration::from_secs(20)).await;
        activity.bytes_read();
        // The watchdog looks two seconds later: the head's limit runs from then, never from
        // before the first byte, and a later look keeps that stamp.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let first = deadline_now(&activity).unwrap();
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert_eq!(deadline_now(&activity), Some(first));
        let expected = activity.epoch + Duration::from_secs(22) + HEADER;
        assert!(near(first.0, expected), "{:?} vs {expected:?}", first.0);

        // The same for the quiet that follows a request.
        drop(activity.begin());
        tokio::time::sleep(Duration::from_secs(4)).await;
        let quiet = deadline_now(&activity).unwrap();
        assert_eq!(quiet.1, Expired::Idle);
        let expected = activity.epoch + Duration::from_secs(29) + IDLE;
        assert!(near(quiet.0, expected), "{:?} vs {expected:?}", quiet.0);
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(deadline_now(&activity), Some(quiet));
    }

    #[tokio::test(start_paused = true)]
    async fn the_watchdog_ends_a_stuck_head_but_not_a_busy_connection() {
        let activity = Activity::new();
        let started = tokio::time::Instant::now();
        let head = async {
            tokio::time::sleep(Duration::from_secs(20)).await;
            activity.bytes_read();
        };
        let (expired, ()) = tokio::join!(watch(pending(), &activity, HEADER, IDLE), head);
        assert_eq!(expired, Some(Expired::Header));
        // Closed within a quarter more than the limit after the head's first byte.
        let closed = started.elapsed().as_secs_f64();
        assert!((30.0..=32.5).contains(&closed), "{closed}");
        let started = tokio::time::Instant::now();

        let activity = Activity::new();
        let busy = activity.begin();
        let release = async {
            tokio::time::sleep(Duration::from_secs(300)).await;
            drop(busy);
        };
        let (expired, ()) = tokio::join!(watch(pending(), &activity, HEADER, IDLE), release);
        assert_eq!(expired, Some(Expired::Idle));
        // Five minutes busy, then a minute idle.
        let closed = started.elapsed().as_secs_f64();
        assert!((360.0..=362.5).contains(&closed), "{closed}");
    }
}
