package io.github.robotsd.client;

import static io.github.robotsd.client.TestRunner.check;
import static io.github.robotsd.client.TestRunner.equal;

import io.github.robotsd.client.TestRunner.Cleanup;
import io.github.robotsd.client.TestRunner.Test;
import io.github.robotsd.client.model.Answer;
import io.github.robotsd.client.model.Robots;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The fetcher against the real robotsd and loopback sites. Timing checks hold the site's own
 * arrival times to a crawl-delay with a floor only (a margin of 5 ms for the loopback's jitter):
 * a slow machine makes a crawl slower, never a check fail.
 */
final class FetcherTest {
  /** How much closer together than their slots two fetches may reach the site (loopback jitter). */
  private static final double ARRIVAL_JITTER_MS = 5;

  private static HttpRequest get(String url) {
    return HttpRequest.newBuilder(URI.create(url)).header("User-Agent", "PaceBot/1.0").build();
  }

  /** Fetches {@code each} pages from each of {@code workers} threads; every fetch must succeed. */
  private static void fetchConcurrently(RobotsdFetcher fetcher, String base, int workers, int each)
      throws Exception {
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < workers; w++) {
      int worker = w;
      Thread thread = new Thread(() -> {
        for (int i = 0; i < each; i++) {
          try {
            HttpResponse<String> r = fetcher.send(get(base + "/w" + worker + "/" + i), HttpResponse.BodyHandlers.ofString());
            check(r.statusCode() == 200, "status " + r.statusCode());
          } catch (Throwable e) {
            failures.add(e);
            return;
          }
        }
      });
      threads.add(thread);
      thread.start();
    }
    for (Thread thread : threads) {
      thread.join();
    }
    if (!failures.isEmpty()) {
      throw new AssertionError("a fetch failed", failures.get(0));
    }
  }

  @Test
  void pacedFetchesFromManyThreadsStartACrawlDelayApart(Cleanup c) throws Exception {
    Harness.Site site = c.add(new Harness.Site("User-agent: *\nCrawl-delay: 0.2\n", Map.of()));
    RobotsdClient client = Harness.robotsd(c, "--default-crawl-delay", "50ms");
    List<Answer> seen = new CopyOnWriteArrayList<>();
    RobotsdFetcher fetcher = RobotsdFetcher.builder(client).onAnswer((r, a) -> seen.add(a)).build();
    fetchConcurrently(fetcher, site.url, 3, 3);
    equal(site.fetches(), 9, "fetches");
    double gap = site.closestGapMs();
    check(gap >= 200 - ARRIVAL_JITTER_MS, "two fetches " + gap + " ms apart; the crawl-delay is 200 ms");
    for (Answer a : seen) {
      check(a.pace() != null && a.pace().reserved() && a.pace().intervalMs() == 200
          && a.pace().intervalSource().equals("crawl_delay"), "pace " + a.pace());
    }
    equal(seen.size() - fetcher.lateSlots(), 9L, "one reservation a fetch, besides the slots woken late for");
  }

  @Test
  void withoutPacingTheFetcherKeepsTheCrawlDelayItself(Cleanup c) throws Exception {
    Harness.Site site = c.add(new Harness.Site("User-agent: *\nCrawl-delay: 0.2\n", Map.of()));
    RobotsdClient client = Harness.robotsd(c, "--default-crawl-delay", "50ms");
    List<Answer> seen = new CopyOnWriteArrayList<>();
    RobotsdFetcher fetcher = RobotsdFetcher.builder(client).noPacing(true).onAnswer((r, a) -> seen.add(a)).build();
    fetchConcurrently(fetcher, site.url, 3, 2);
    equal(site.fetches(), 6, "fetches");
    double gap = site.closestGapMs();
    check(gap >= 200 - ARRIVAL_JITTER_MS, "two fetches " + gap + " ms apart; the crawl-delay is 200 ms");
    check(seen.stream().allMatch(a -> a.pace() == null), "no slot reserved without pacing");
    Robots robots = client.robots(site.url + "/", false);
    check(robots.pace() == null || robots.pace().lastSlot() == null, "robotsd handed out no slot: " + robots.pace());
  }

  @Test
  void a429WithRetryAfterHoldsTheNextFetchBackAndSlowsTheFleet(Cleanup c) throws Exception {
    Map<String, Harness.Page> pages = Map.of("/busy", e -> {
      e.getResponseHeaders().set("Retry-After", "1");
      Harness.send(e, 429, "text/plain", "slow down");
    });
    Harness.Site site = c.add(new Harness.Site("User-agent: *\nDisallow: /private/\n", pages));
    RobotsdClient client = Harness.robotsd(c, "--default-crawl-delay", "50ms");
    RobotsdFetcher fetcher = RobotsdFetcher.builder(client).userAgent("PaceBot").build();
    HttpResponse<String> busy = fetcher.send(get(site.url + "/busy"), HttpResponse.BodyHandlers.ofString());
    equal(busy.statusCode(), 429, "status");
    long answered = System.nanoTime();
    fetcher.send(get(site.url + "/next"), HttpResponse.BodyHandlers.ofString());
    double waited = (System.nanoTime() - answered) / 1e6;
    check(waited >= 950, "the next fetch waited " + waited + " ms after Retry-After: 1");
    Robots robots = client.robots(site.url + "/", false);
    check(robots.pace() != null && robots.pace().slowdown() > 1, "robotsd heard of it: " + robots.pace());
  }

  @Test
  void deferredSlotsAreAskedForAgainUntilEveryPageIsFetched(Cleanup c) throws Exception {
    Harness.Site site = c.add(new Harness.Site("User-agent: *\nCrawl-delay: 0.2\n", Map.of()));
    RobotsdClient client = Harness.robotsd(c, "--max-pace-wait", "100ms");
    List<Answer> seen = new CopyOnWriteArrayList<>();
    RobotsdFetcher fetcher = RobotsdFetcher.builder(client).onAnswer((r, a) -> seen.add(a)).build();
    fetchConcurrently(fetcher, site.url, 4, 2);
    equal(site.fetches(), 8, "every page fetched");
    check(seen.stream().anyMatch(a -> a.pace() != null && !a.pace().reserved()), "some slots were deferred");
    check(site.closestGapMs() >= 200 - ARRIVAL_JITTER_MS, "gap " + site.closestGapMs());
  }

  @Test
  void aDisallowedRequestIsRefusedWithItsLineAndNotFetched(Cleanup c) throws Exception {
    Harness.Site site = Harness.site51(c);
    RobotsdClient client = Harness.robotsd(c);
    RobotsdFetcher fetcher = RobotsdFetcher.builder(client).userAgent("ExampleBot").build();
    try {
      fetcher.send(get(site.url + "/private/report"), HttpResponse.BodyHandlers.discarding());
      throw new AssertionError("fetched a disallowed page");
    } catch (DisallowedException e) {
      check(e.getMessage().contains("robots.txt line 2 (disallow: /private/)"), e.getMessage());
      equal(e.answer().reason(), "matched_rule", "reason");
    }
    equal(site.hits("/private/report"), 0, "fetches of the disallowed page");
  }

  @Test
  void anUnreachableRobotsdFailsClosedUnlessToldOtherwise(Cleanup c) throws Exception {
    Harness.Site site = Harness.site51(c);
    RobotsdClient down = RobotsdClient.create("http://127.0.0.1:" + Harness.freePort());
    try {
      RobotsdFetcher.builder(down).build().send(get(site.url + "/p/1"), HttpResponse.BodyHandlers.discarding());
      throw new AssertionError("fetched unchecked");
    } catch (UnavailableException e) {
      equal(site.hits("/p/1"), 0, "fetches");
    }
    HttpResponse<Void> r = RobotsdFetcher.builder(down).failOpen(true).build()
        .send(get(site.url + "/p/1"), HttpResponse.BodyHandlers.discarding());
    equal(r.statusCode(), 200, "status");
    equal(site.hits("/p/1"), 1, "fetches with failOpen");
  }
}
