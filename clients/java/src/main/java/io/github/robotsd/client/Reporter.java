package io.github.robotsd.client;

import io.github.robotsd.client.model.Report;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Sends a fetcher's reports to robotsd in the background, batched: one thread at a time posts
 * whatever was queued since its last post. A pushback is remembered until it is sent, so that
 * the fetcher's next request to that origin reserves its slot after robotsd knows.
 */
final class Reporter {
  /** The longest a post may take, and the longest a request waits for a pushback's. */
  static final Duration REPORT_TIMEOUT = Duration.ofSeconds(10);

  private final RobotsdClient client;
  private List<Report> next = new ArrayList<>();
  private CompletableFuture<Void> nextDone = new CompletableFuture<>();
  private boolean running;
  /** The batch of the last report queued: once it is done, every report so far is. */
  private CompletableFuture<Void> lastQueued;
  private final Map<String, CompletableFuture<Void>> pushback = new HashMap<>();

  Reporter(RobotsdClient client) {
    this.client = client.withTimeout(REPORT_TIMEOUT);
  }

  synchronized void add(String origin, Report report, boolean isPushback) {
    next.add(report);
    lastQueued = nextDone;
    if (isPushback) {
      pushback.put(origin, nextDone);
    }
    if (!running) {
      running = true;
      Thread thread = new Thread(this::run, "robotsd-reporter");
      // Reports left when a crawler exits are not worth keeping it alive for.
      thread.setDaemon(true);
      thread.start();
    }
  }

  private void run() {
    for (;;) {
      List<Report> batch;
      CompletableFuture<Void> done;
      synchronized (this) {
        if (next.isEmpty()) {
          running = false;
          return;
        }
        batch = next;
        done = nextDone;
        next = new ArrayList<>();
        nextDone = new CompletableFuture<>();
      }
      try {
        client.feedback(batch);
      } catch (RuntimeException e) {
        // A report that fails is dropped: robotsd will hear of the next pushback.
      }
      done.complete(null);
      synchronized (this) {
        pushback.values().removeIf(d -> d == done);
      }
    }
  }

  /** Waits until a pushback from the origin being reported has been (at most REPORT_TIMEOUT). */
  void settled(String origin) throws InterruptedException {
    CompletableFuture<Void> done;
    synchronized (this) {
      done = pushback.get(origin);
    }
    await(done);
  }

  /** Waits until every report queued so far has been sent or failed (at most REPORT_TIMEOUT). */
  void flush() throws InterruptedException {
    CompletableFuture<Void> done;
    synchronized (this) {
      done = lastQueued;
    }
    await(done);
  }

  private static void await(CompletableFuture<Void> done) throws InterruptedException {
    if (done == null) {
      return;
    }
    try {
      done.get(REPORT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e) {
      // Reserve anyway: a lost report must not stop the crawl.
    }
  }
}
