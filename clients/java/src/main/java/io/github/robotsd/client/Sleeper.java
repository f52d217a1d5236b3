package io.github.robotsd.client;

import java.time.Duration;

/** Waits on the monotonic clock. */
final class Sleeper {
  private Sleeper() {}

  /** Waits {@code d}; a sleep that wakes early (it may) sleeps the rest. */
  static void sleep(Duration d) throws InterruptedException {
    sleepUntil(System.nanoTime() + d.toNanos());
  }

  /** Waits until {@link System#nanoTime()} reaches {@code deadline}. */
  static void sleepUntil(long deadline) throws InterruptedException {
    for (long left = deadline - System.nanoTime(); left > 0; left = deadline - System.nanoTime()) {
      Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
    }
  }
}
