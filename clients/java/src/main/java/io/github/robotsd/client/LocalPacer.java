package io.github.robotsd.client;

import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * Keeps a crawl-delay between the starts of one {@link RobotsdFetcher}'s requests to an origin,
 * as robotsd does for a fleet (each request takes the earliest start that is its interval after
 * the origin's last one), and holds an origin back for a {@code Retry-After} it answered.
 */
final class LocalPacer {
  /** The longest crawl-delay kept here, as robotsd caps it (its default --max-crawl-delay). */
  static final Duration MAX_LOCAL_DELAY = Duration.ofSeconds(60);

  /** The longest Retry-After honoured here, as robotsd caps it (its default --max-retry-after). */
  static final Duration MAX_LOCAL_HOLD = Duration.ofMinutes(10);

  private final Map<String, Long> last = new HashMap<>();
  private final Map<String, Long> held = new HashMap<>();
  private int pruneAt = 1024;

  /** Holds the origin's requests back until the end of a Retry-After answered at now. */
  synchronized void hold(String origin, String retryAfter) {
    Duration wait = RetryAfter.parse(retryAfter, System.currentTimeMillis());
    if (wait == null || wait.isZero()) {
      return;
    }
    if (wait.compareTo(MAX_LOCAL_HOLD) > 0) {
      wait = MAX_LOCAL_HOLD;
    }
    long until = System.nanoTime() + wait.toNanos();
    held.merge(origin, until, (a, b) -> a - b > 0 ? a : b);
  }

  /** How long the origin is still held back by a Retry-After; zero when it is not. */
  synchronized Duration heldFor(String origin) {
    Long until = held.get(origin);
    if (until == null) {
      return Duration.ZERO;
    }
    long left = until - System.nanoTime();
    if (left <= 0) {
      held.remove(origin);
      return Duration.ZERO;
    }
    return Duration.ofNanos(left);
  }

  /**
   * Takes the request's start, {@code interval} and the guard after the last one to the origin,
   * and waits for it. No interval (no crawl-delay) waits for nothing.
   */
  void await(String origin, Duration interval) throws InterruptedException {
    if (interval.compareTo(MAX_LOCAL_DELAY) > 0) {
      interval = MAX_LOCAL_DELAY;
    }
    if (!interval.isZero()) {
      interval = interval.plus(RobotsdFetcher.LOCAL_PACE_GUARD);
    }
    long start = take(origin, interval.toNanos(), System.nanoTime());
    long hold = heldFor(origin).toNanos();
    Sleeper.sleepUntil(Math.max(start, System.nanoTime() + hold));
  }

  private synchronized long take(String origin, long interval, long now) {
    long at = now;
    Long previous = last.get(origin);
    if (previous != null && previous + interval - at > 0) {
      at = previous + interval;
    }
    last.put(origin, at);
    // Forget the origins whose last start is too long ago to matter, once there are many.
    if (last.size() > pruneAt) {
      for (Iterator<Long> it = last.values().iterator(); it.hasNext(); ) {
        if (now - it.next() > MAX_LOCAL_DELAY.toNanos()) {
          it.remove();
        }
      }
      pruneAt = Math.max(1024, 2 * last.size());
    }
    return at;
  }
}
