package io.github.robotsd.client;

import static io.github.robotsd.client.TestRunner.check;
import static io.github.robotsd.client.TestRunner.equal;

import com.sun.net.httpserver.HttpServer;
import io.github.robotsd.client.TestRunner.Cleanup;
import io.github.robotsd.client.TestRunner.Test;
import io.github.robotsd.client.model.Answer;
import io.github.robotsd.client.model.FeedbackResult;
import io.github.robotsd.client.model.PaceState;
import io.github.robotsd.client.model.Report;
import io.github.robotsd.client.model.Robots;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** The client's calls against the real robotsd, and its retries and deadlines against a stand-in. */
final class ClientTest {

  @Test
  void aCheckSaysWhyAndTheBatchAgreesWithIt(Cleanup c) throws Exception {
    Harness.Site site = Harness.site51(c);
    RobotsdClient client = Harness.robotsd(c);
    Answer answer = client.check(site.url + "/private/report", "Mozilla/5.0 (compatible; ExampleBot/1.0)");
    check(!answer.allowed() && answer.full(), "a full disallowing answer: " + answer);
    equal(answer.reason(), "matched_rule", "reason");
    equal(answer.rule().line(), 2, "rule line");
    equal(answer.rule().pattern(), "/private/", "rule pattern");
    equal(answer.agent().tokens(), List.of("ExampleBot"), "product token");
    equal(answer.crawlDelay(), 0.01, "crawl-delay");
    check(answer.pace() == null && answer.record() == null, "no pace nor record unasked: " + answer);
    Answer other = client.check(site.url + "/p/1", "OtherBot");
    check(!other.allowed() && !other.group().global(), "OtherBot's own group: " + other);

    List<String> urls = new ArrayList<>();
    for (String p : Harness.sitePaths()) {
      urls.add(site.url + p);
    }
    List<BatchResult> results = client.checkMany(urls, "ExampleBot");
    equal(results.size(), 51, "results");
    long allowed = results.stream().filter(r -> r.answer().allowed()).count();
    equal(allowed, 36L, "allowed of 51");
    for (int i = 0; i < urls.size(); i++) {
      equal(results.get(i).answer().url(), urls.get(i), "result " + i + " in order");
    }
    equal(site.hits("/robots.txt"), 1, "robots.txt fetches");
  }

  @Test
  @SuppressWarnings("deprecation")
  void theBatchTakesTheAgentsLastAsTheCheckDoesAndTheOldOrderStill(Cleanup c) throws Exception {
    Harness.Site site = Harness.site51(c);
    RobotsdClient client = Harness.robotsd(c);
    List<String> urls = List.of(site.url + "/p/1", site.url + "/private/1");
    // Several agents, as check(url, ua...) takes them: OtherBot's own group disallows all.
    List<Boolean> got = client.checkManyVerdicts(urls, "ExampleBot", "OtherBot").stream()
        .map(r -> r.answer().allowed()).toList();
    equal(got, List.of(false, false), "ExampleBot and OtherBot: OtherBot's group applies");
    got = client.checkManyVerdicts(urls, "ExampleBot").stream().map(r -> r.answer().allowed()).toList();
    equal(got, List.of(true, false), "ExampleBot");
    // The list-of-agents form of before this order, kept so that old code compiles and answers alike.
    got = client.checkManyVerdicts(List.of("ExampleBot"), urls).stream().map(r -> r.answer().allowed()).toList();
    equal(got, List.of(true, false), "the agents first, deprecated");
    equal(client.checkMany(List.of("ExampleBot"), urls).get(1).answer().rule().line(), 2, "checkMany, deprecated");
    try {
      client.checkMany(urls);
      throw new AssertionError("a batch without an agent was sent");
    } catch (IllegalArgumentException e) {
      check(e.getMessage().contains("ua"), e.getMessage());
    }
  }

  @Test
  void viewVerdictAnswersTheVerdictAlone(Cleanup c) throws Exception {
    Harness.Site site = Harness.site51(c);
    RobotsdClient client = Harness.robotsd(c);
    Answer verdict = client.checkVerdict(site.url + "/private/1", "ExampleBot");
    check(!verdict.full() && !verdict.allowed() && verdict.rule() == null && verdict.url() == null,
        "the verdict alone: " + verdict);
    equal(verdict.reason(), "matched_rule", "reason");
    List<BatchResult> results = client.checkManyVerdicts(
        List.of(site.url + "/p/1", site.url + "/docs/1.pdf", "ftp://example.com/"), "ExampleBot");
    check(results.get(0).answer().allowed() && !results.get(0).answer().full(), "verdict 0: " + results);
    check(!results.get(1).answer().allowed(), "verdict 1: " + results);
    check(results.get(2).isProblem(), "a bad item is its problem: " + results);
    equal(results.get(2).problem().type(), "urn:robotsd:problem:unsupported-scheme", "type");
  }

  @Test
  void aCheckRecordedCarriesWhatRobotsTxtSaid(Cleanup c) throws Exception {
    Harness.Site site = Harness.site51(c);
    RobotsdClient client = Harness.robotsd(c);
    Answer answer = client.checkRecorded(site.url + "/private/report", "ExampleBot");
    equal(answer.record().path("format").asText(), "robotsd-record/1", "record format");
    equal(answer.record().path("robots_txt").path("rule").path("line").asInt(), 2, "record rule");
  }

  @Test
  void problemsAreTypedAndCarryTheRequestId(Cleanup c) throws Exception {
    RobotsdClient client = Harness.robotsd(c).withRequestId("java-test-42");
    try {
      client.check("ftp://example.com/", "ExampleBot");
      throw new AssertionError("no problem for an ftp URL");
    } catch (ProblemException e) {
      equal(e.status(), 400, "status");
      equal(e.type(), "urn:robotsd:problem:unsupported-scheme", "type");
      check(!e.title().isEmpty() && !e.detail().isEmpty(), "title and detail: " + e.problem());
      equal(e.requestId(), "java-test-42", "the request id robotsd answered with");
    }
    List<FeedbackResult> results = client.feedback(List.of(Report.ofStatus("ftp://example.com/", 200)));
    check(!results.get(0).taken(), "a report robotsd cannot take: " + results);
    try {
      client.report(Report.ofStatus("ftp://example.com/", 200));
      throw new AssertionError("report() took an ftp URL");
    } catch (ProblemException e) {
      check(e.status() >= 400, "problem " + e.problem());
    }
  }

  @Test
  void reportsSlowTheOriginDownAndRobotsShowsIt(Cleanup c) throws Exception {
    Harness.Site site = Harness.site51(c);
    RobotsdClient client = Harness.robotsd(c);
    Answer answer = client.checkPaced(site.url + "/p/1", "ExampleBot");
    check(answer.pace() != null && answer.pace().reserved(), "a reserved slot: " + answer.pace());
    PaceState state = client.report(Report.ofStatus(site.url + "/p/1", 503, "30"));
    check(state.slowdown() > 1 && state.retryAfterUntil() != null, "slowed down: " + state);
    Robots robots = client.robots(site.url + "/", true);
    equal(robots.state(), "parsed", "state");
    check(robots.robotsTxt().contains("Crawl-delay: 0.01"), "the file's text");
    check(robots.pace() != null && robots.pace().slowdown() > 1, "pace state: " + robots.pace());
    equal(robots.parsed().groups().size(), 2, "groups");
  }

  /** A stand-in robotsd answering 503 a number of times first: robotsd itself is never overloaded here. */
  private static HttpServer overloaded(Cleanup c, AtomicInteger refusals, String retryAfter, List<String> seenIds)
      throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    server.createContext("/", exchange -> {
      try (exchange) {
        seenIds.add(String.valueOf(exchange.getRequestHeaders().getFirst("X-Request-Id")));
        exchange.getResponseHeaders().set("X-Request-Id", "stand-in-id");
        if (refusals.getAndDecrement() > 0) {
          byte[] body = ("{\"type\":\"urn:robotsd:problem:overloaded\",\"title\":\"Overloaded\","
              + "\"status\":503,\"detail\":\"at the concurrency limit\"}").getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().set("Content-Type", "application/problem+json");
          exchange.getResponseHeaders().set("Retry-After", retryAfter);
          exchange.sendResponseHeaders(503, body.length);
          exchange.getResponseBody().write(body);
          return;
        }
        Harness.send(exchange, 200, "application/json", "{\"allowed\":true,\"reason\":\"no_matching_rule\"}");
      }
    });
    server.start();
    c.add(() -> server.stop(0));
    return server;
  }

  @Test
  void a503IsRetriedAfterItsRetryAfterWithinTheDeadline(Cleanup c) throws Exception {
    AtomicInteger refusals = new AtomicInteger(2);
    List<String> ids = new CopyOnWriteArrayList<>();
    HttpServer server = overloaded(c, refusals, "1", ids);
    String base = "http://127.0.0.1:" + server.getAddress().getPort();
    long start = System.nanoTime();
    Answer answer = RobotsdClient.create(base).withRequestId("retry-1").checkVerdict("http://a.test/", "Bot");
    double took = (System.nanoTime() - start) / 1e9;
    check(answer.allowed(), "answered after two 503s");
    check(took >= 2.0, "two waits of Retry-After: 1, took " + took + " s");
    equal(ids, List.of("retry-1", "retry-1", "retry-1"), "one request id for every attempt");

    // No retries: the 503 is the caller's, with its type, status and robotsd's request id.
    refusals.set(1);
    try {
      RobotsdClient.builder(base).maxRetries(0).build().check("http://a.test/", "Bot");
      throw new AssertionError("no problem");
    } catch (ProblemException e) {
      equal(e.status(), 503, "status");
      equal(e.type(), "urn:robotsd:problem:overloaded", "type");
      equal(e.requestId(), "stand-in-id", "request id");
    }

    // A Retry-After past the deadline is not waited for.
    refusals.set(5);
    start = System.nanoTime();
    try {
      RobotsdClient.builder(base).timeout(Duration.ofMillis(800)).build().check("http://a.test/", "Bot");
      throw new AssertionError("no problem");
    } catch (ProblemException e) {
      equal(e.status(), 503, "status");
    }
    took = (System.nanoTime() - start) / 1e9;
    check(took < 0.75, "gave up at once rather than wait 1 s past the 800 ms deadline: " + took + " s");
  }

  @Test
  void aCallEndsAtItsDeadline(Cleanup c) throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    server.createContext("/", exchange -> {
      try (exchange) {
        Thread.sleep(5000);
        Harness.send(exchange, 200, "application/json", "{}");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
    server.start();
    c.add(() -> server.stop(0));
    RobotsdClient client = RobotsdClient.create("http://127.0.0.1:" + server.getAddress().getPort());
    long start = System.nanoTime();
    try {
      client.withTimeout(Duration.ofMillis(300)).check("http://a.test/", "Bot");
      throw new AssertionError("no timeout");
    } catch (UnavailableException e) {
      check(e.getMessage().contains("timed out"), e.getMessage());
    }
    double took = (System.nanoTime() - start) / 1e9;
    check(took < 4, "the deadline, not the stand-in's 5 s, ended the call: " + took + " s");
    equal(client.timeout(), RobotsdClient.DEFAULT_TIMEOUT, "the client keeps its own deadline");
  }

  @Test
  void theJitterAndRetryAfterAreBounded(Cleanup c) {
    equal(RobotsdClient.askAgainDelay(Duration.ofSeconds(2), 0), Duration.ofSeconds(2), "no jitter");
    equal(RobotsdClient.askAgainDelay(Duration.ofSeconds(2), 0.5), Duration.ofMillis(2100), "half of a tenth");
    equal(RobotsdClient.askAgainDelay(Duration.ofSeconds(60), 0.999999).compareTo(Duration.ofSeconds(61)) < 0,
        true, "at most a second");
    equal(RobotsdClient.askAgainDelay(Duration.ZERO, 0.5), Duration.ZERO, "nothing to wait");
    equal(RetryAfter.parse("7", 0), Duration.ofSeconds(7), "seconds");
    equal(RetryAfter.parse("Thu, 01 Jan 1970 00:00:10 GMT", 4000), Duration.ofSeconds(6), "a date");
    equal(RetryAfter.parse("soon", 0), null, "unreadable");
    equal(RobotsdFetcher.slotLateness(Duration.ofMillis(20)), Duration.ofMillis(5), "at least 5 ms");
    equal(RobotsdFetcher.slotLateness(Duration.ofMillis(200)), Duration.ofMillis(10), "a twentieth");
    equal(RobotsdFetcher.slotLateness(Duration.ofSeconds(2)), Duration.ofMillis(25), "at most 25 ms");
  }
}
