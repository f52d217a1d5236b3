package io.github.robotsd.client;

import static io.github.robotsd.client.TestRunner.check;
import static io.github.robotsd.client.TestRunner.equal;

import io.github.robotsd.client.TestRunner.Cleanup;
import io.github.robotsd.client.TestRunner.Test;
import io.github.robotsd.client.model.Answer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The rules object as a crawler keeps it, per host and for hours: against the real robotsd,
 * through a {@link Gate} that counts the calls and plays robotsd down, overloaded or behind a
 * proxy. Each claim of the README's "What goes over the network" for it is held here.
 */
final class RulesTest {

  @Test
  void theRulesAnswerFromWhatTheyHoldAndAskOnlyForNewUrls(Cleanup c) throws Exception {
    Harness.Site site = Harness.site51(c);
    Gate gate = c.add(new Gate(Harness.robotsd(c)));
    RobotsRules rules = gate.client().rules(site.url + "/", "ExampleBot");
    equal(gate.calls, List.of("GET /v1/check", "GET /v1/robots"), "made: the check, then the file");

    check(rules.isAllowed(site.url + "/p/3"), "/p/3 allowed");
    check(!rules.isAllowed(site.url + "/private/3"), "/private/3 disallowed");
    check(rules.isAllowed(site.url + "/private/public/3"), "the allow wins");
    check(!rules.isAllowed(site.url + "/docs/3.pdf"), "the anchored wildcard");
    check(rules.isAllowed(site.url + "/"), "the URL the rules were made for, held from the start");
    equal(gate.count("GET", "/v1/check"), 5L, "one verdict asked per new URL");
    for (int i = 0; i < 3; i++) {
      check(rules.isAllowed(site.url + "/p/3") && !rules.isAllowed(site.url + "/private/3"), "asked again");
    }
    equal(gate.calls.size(), 6, "a URL asked before is answered from memory");

    // Many at once: one batch for those not held, then from memory.
    List<String> urls = new ArrayList<>();
    for (String p : Harness.sitePaths()) {
      urls.add(site.url + p);
    }
    equal(rules.prefetch(urls), 46, "the 46 URLs not held, answered");
    equal(gate.count("POST", "/v1/check"), 1L, "one batch");
    int before = gate.calls.size();
    long allowed = urls.stream().filter(rules::isAllowed).count();
    equal(allowed, 36L, "allowed of 51, as robotsd answers them");
    equal(rules.getSitemaps(), List.of("http://127.0.0.1/sitemap.xml"), "sitemaps");
    check(!rules.isAllowAll() && !rules.isAllowNone() && !rules.isDeferVisits(), "a parsed file");
    equal(rules.crawlDelay(), Optional.of(Duration.ofMillis(10)), "crawl-delay");
    equal(gate.calls.size(), before, "no call for a prefetched URL, nor for the rest");
  }

  @Test
  void robotsdDownNeverThrowsHeldVerdictsStandAndNewUrlsFailAsConfigured(Cleanup c) throws Exception {
    Harness.Site site = Harness.site51(c);
    Gate gate = c.add(new Gate(Harness.robotsd(c)));
    RobotsRules closed = gate.client().rules(site.url + "/", "ExampleBot");
    RobotsRules open = RobotsRules.builder(gate.client(), site.url + "/", "ExampleBot").failOpen(true).build();
    for (RobotsRules rules : List.of(closed, open)) {
      check(rules.isAllowed(site.url + "/p/1") && !rules.isAllowed(site.url + "/private/1"), "held");
    }

    gate.mode = Gate.Mode.DOWN;
    for (RobotsRules rules : List.of(closed, open)) {
      check(rules.isAllowed(site.url + "/p/1"), "a held allow stands");
      check(!rules.isAllowed(site.url + "/private/1"), "a held disallow stands");
      check(rules.lastError().isEmpty(), "nothing asked yet: " + rules.lastError());
    }
    equal(closed.prefetch(List.of(site.url + "/p/8", site.url + "/p/9")), 0, "prefetch: none answered");
    check(closed.lastError().orElse(null) instanceof UnavailableException, "why: " + closed.lastError());
    check(!closed.isAllowed(site.url + "/p/2"), "a new URL, failing closed: disallowed");
    check(open.isAllowed(site.url + "/private/2"), "a new URL, failing open: allowed");
    for (RobotsRules rules : List.of(closed, open)) {
      check(rules.lastError().orElse(null) instanceof UnavailableException, "why: " + rules.lastError());
      equal(rules.getCrawlDelay(), 10L, "the crawl-delay held");
      check(!rules.isDeferVisits(), "rules held: the verdicts held answer");
    }

    // robotsd's own 503s, retried, then not asked again for recheckAfterFailure: a fetcher
    // thread waits on an overloaded robotsd once, not once per URL.
    gate.mode = Gate.Mode.OVERLOADED;
    long checks = gate.count("GET", "/v1/check");
    // Its refreshes on a thread of the test's, so that the test knows when one is over.
    ExecutorService refresher = Executors.newSingleThreadExecutor();
    c.add(() -> refresher.shutdownNow());
    RobotsRules rules = RobotsRules.builder(gate.client(), site.url + "/", "ExampleBot")
        .recheckAfterFailure(Duration.ofMillis(400)).executor(refresher).build();
    equal(gate.count("GET", "/v1/check") - checks, 3L, "made: the check, retried twice");
    check(rules.robots() == null && rules.isDeferVisits() && !rules.isAllowAll(), "nothing held: defer");
    equal(rules.getCrawlDelay(), RobotsRules.UNSET_CRAWL_DELAY, "no crawl-delay held");
    check(((ProblemException) rules.lastError().orElseThrow()).type().endsWith(":overloaded"), "why");
    int before = gate.calls.size();
    check(!rules.isAllowed(site.url + "/p/5") && !rules.isAllowed(site.url + "/p/6"), "failing closed");
    equal(gate.calls.size(), before, "not asked again within recheckAfterFailure");

    // Back: the next use after it refreshes in the background, and the rules hold the file.
    gate.mode = Gate.Mode.PASS;
    long batches = gate.count("POST", "/v1/check");
    Thread.sleep(500);
    check(rules.isAllowed(site.url + "/p/5"), "asked again, and allowed");
    refresher.submit(() -> { }).get();
    check(gate.count("POST", "/v1/check") == batches + 1 && rules.robots() != null && !rules.isDeferVisits(),
        "refreshed in the background");
    equal(rules.crawlDelay(), Optional.of(Duration.ofMillis(10)), "the crawl-delay, once held");
    check(rules.lastError().isEmpty(), "no error once answered: " + rules.lastError());

    // A proxy's 503 page is robotsd not answering too, asked once.
    gate.mode = Gate.Mode.PROXY_503;
    before = gate.calls.size();
    check(!rules.isAllowed(site.url + "/p/7"), "failing closed behind a proxy's 503");
    equal(gate.calls.size(), before + 1, "one call, not retried");
  }

  @Test
  void aRobotsdNeverReachedMakesRulesThatHoldNothingAndDefer(Cleanup c) throws Exception {
    RobotsdClient nowhere = RobotsdClient.create("http://127.0.0.1:" + Harness.freePort());
    try {
      nowhere.check("http://a.test/p", "ExampleBot");
      throw new AssertionError("an answer from nowhere");
    } catch (UnavailableException e) {
      // The client's own calls throw; the rules object below does not.
    }
    RobotsRules closed = nowhere.rules("http://a.test/", "ExampleBot");
    check(!closed.isAllowed("http://a.test/p"), "failing closed");
    check(closed.isDeferVisits() && !closed.isAllowNone() && !closed.isAllowAll(), "defer: nothing held");
    check(closed.robots() == null && closed.getSitemaps().isEmpty(), "nothing held");
    equal(closed.crawlDelay(), Optional.empty(), "no crawl-delay");
    equal(closed.getCrawlDelay(), Long.MIN_VALUE, "crawler-commons' unset crawl-delay");
    check(closed.lastError().orElse(null) instanceof UnavailableException, "why: " + closed.lastError());
    RobotsRules open = RobotsRules.builder(nowhere, "http://a.test/", "ExampleBot").failOpen(true).build();
    check(open.isAllowed("http://a.test/p") && !open.isDeferVisits(), "failing open");
  }

  @Test
  void missingRulesAnUnreachableFileAndABadUrlAreRobotsdsAnswers(Cleanup c) throws Exception {
    RobotsdClient client = Harness.robotsd(c);
    // No robots.txt (a 404): everything allowed, and no crawl-delay.
    Harness.Site bare = c.add(new Harness.Site(null, Map.of()));
    RobotsRules none = client.rules(bare.url + "/", "ExampleBot");
    check(none.isAllowAll() && none.isAllowed(bare.url + "/any/thing"), "no robots.txt: allow all");
    check(none.getSitemaps().isEmpty() && !none.isDeferVisits(), "nothing else");
    equal(none.getCrawlDelay(), RobotsRules.UNSET_CRAWL_DELAY, "no crawl-delay: Long.MIN_VALUE");
    equal(none.crawlDelay(), Optional.empty(), "no crawl-delay: empty");
    Answer missing = client.check(bare.url + "/any/thing", "ExampleBot");
    check(missing.allowed() && "no_robots_txt".equals(missing.reason()), "a check: allowed, not thrown: " + missing);
    try {
      // Why crawlDelay() is there: crawler-commons' unset value cannot be waited on.
      Thread.sleep(none.getCrawlDelay());
      throw new AssertionError("slept a negative crawl-delay");
    } catch (IllegalArgumentException e) {
      // As the issue says.
    }

    // robots.txt unreachable (nothing listens): robotsd disallows the origin for now.
    String gone = "http://127.0.0.1:" + Harness.freePort();
    RobotsRules unreachable = client.rules(gone + "/", "ExampleBot");
    check(unreachable.isAllowNone() && unreachable.isDeferVisits(), "unreachable: allow none, defer");
    check(!unreachable.isAllowed(gone + "/p"), "disallowed");
    check(unreachable.lastError().isEmpty(), "robotsd's verdict, not a failure");
    Answer refused = client.check(gone + "/q", "ExampleBot");
    check(!refused.allowed() && "unreachable_disallow_all".equals(refused.reason()), "a check: " + refused);

    // A URL robotsd cannot check is a problem, not thrown: the failure mode answers it.
    Harness.Site site = Harness.site51(c);
    RobotsRules rules = client.rules(site.url + "/", "ExampleBot");
    check(!rules.isAllowed("ftp://example.com/"), "an ftp URL: disallowed");
    check(rules.lastError().orElse(null) instanceof ProblemException p && p.status() == 400,
        "the problem: " + rules.lastError());
    check(rules.isAllowed(site.url + "/p/1"), "a 4xx is about its URL: the next one is asked");
  }

  @Test
  void theRulesAreRefreshedInTheBackgroundWhileUsedAndNotOnceClosed(Cleanup c) throws Exception {
    Harness.Site site = Harness.site51(c);
    // robots.txt kept a second, so that a change reaches robotsd within the test.
    Gate gate = c.add(new Gate(Harness.robotsd(c, "--min-lifetime", "1s", "--default-lifetime", "1s")));
    ExecutorService refresher = Executors.newSingleThreadExecutor();
    c.add(() -> refresher.shutdownNow());
    RobotsRules rules = RobotsRules.builder(gate.client(), site.url + "/", "ExampleBot")
        .refreshEvery(Duration.ofMillis(200)).executor(refresher).build();
    check(rules.isAllowed(site.url + "/p/1"), "allowed at first");
    equal(rules.getCrawlDelay(), 10L, "crawl-delay at first");

    site.robots = "User-agent: *\nDisallow: /p/\nCrawl-delay: 2\n";
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    // robotsd answers from its stale copy while it fetches the new one, and the crawl-delay and
    // the verdicts are asked for one after the other: either may come a refresh later.
    while ((rules.isAllowed(site.url + "/p/1") || rules.getCrawlDelay() != 2000) && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    check(!rules.isAllowed(site.url + "/p/1"), "the new file's verdict, refreshed in the background");
    equal(rules.getCrawlDelay(), 2000L, "the new crawl-delay");

    rules.close();
    refresher.submit(() -> { }).get();
    check(gate.count("POST", "/v1/check") >= 1, "the verdicts held asked for in a batch: " + gate.calls);
    equal(gate.count("GET", "/v1/check") - gate.count("GET", "/v1/robots"), 1L,
        "the held URL itself never asked for alone but the once: " + gate.calls);
    int before = gate.calls.size();
    for (int i = 0; i < 5; i++) {
      check(!rules.isAllowed(site.url + "/p/1"), "still held");
      Thread.sleep(100);
    }
    refresher.submit(() -> { }).get();
    equal(gate.calls.size(), before, "closed: no refresh");
  }
}
