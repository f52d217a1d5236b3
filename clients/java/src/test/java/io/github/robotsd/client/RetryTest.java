package io.github.robotsd.client;

import static io.github.robotsd.client.TestRunner.check;
import static io.github.robotsd.client.TestRunner.equal;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.github.robotsd.client.TestRunner.Cleanup;
import io.github.robotsd.client.TestRunner.Test;
import io.github.robotsd.client.model.Answer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Which 503s are retried, and how often: against a loopback stand-in for robotsd that counts
 * the requests it is sent, since the real robotsd is never overloaded here. Retry-After is 0,
 * so that the counts, not the waits, are what is tested.
 */
final class RetryTest {

  /** robotsd's own 503, as src/api/problem writes it. */
  static void overloaded(HttpExchange exchange) throws IOException {
    byte[] body = ("{\"type\":\"urn:robotsd:problem:overloaded\",\"title\":\"Overloaded\","
        + "\"status\":503,\"detail\":\"robotsd is at its concurrency limit; retry after 0 s\"}")
        .getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/problem+json");
    exchange.getResponseHeaders().set("Retry-After", "0");
    exchange.sendResponseHeaders(503, body.length);
    exchange.getResponseBody().write(body);
  }

  /** A proxy's or load balancer's 503: an HTML page, with a Retry-After too. */
  static void proxyPage(HttpExchange exchange) throws IOException {
    exchange.getResponseHeaders().set("Retry-After", "0");
    Harness.send(exchange, 503, "text/html", "<html><body><h1>503 Service Unavailable</h1></body></html>");
  }

  /**
   * A stand-in answering {@code refusals} checks with {@code refuse}, then allowing with a
   * reserved slot; {@code requests} counts the checks.
   */
  static String standIn(Cleanup c, AtomicInteger requests, int refusals, Harness.Page refuse) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    server.createContext("/", exchange -> {
      try (exchange) {
        if (!exchange.getRequestURI().getPath().equals("/v1/check")) {
          // The fetcher's reports, in the background: taken, and not counted.
          Harness.send(exchange, 200, "application/json", "{\"results\":[]}");
          return;
        }
        if (requests.incrementAndGet() <= refusals) {
          refuse.serve(exchange);
          return;
        }
        // A slot 100 ms ahead: the JDK's server sends the body a moment after the headers, which
        // a slot due at once would count as waking up late for it.
        Harness.send(exchange, 200, "application/json", "{\"allowed\":true,\"reason\":\"no_matching_rule\","
            + "\"pace\":{\"outcome\":\"reserved\",\"next\":\"fetch\",\"wait_ms\":100,\"interval_ms\":1000}}");
      }
    });
    server.start();
    c.add(() -> server.stop(0));
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  @Test
  void onlyRobotsdsOwn503IsRetried(Cleanup c) throws Exception {
    AtomicInteger requests = new AtomicInteger();
    RobotsdClient own = RobotsdClient.create(standIn(c, requests, 100, RetryTest::overloaded));
    try {
      own.check("http://a.test/", "Bot");
      throw new AssertionError("no problem");
    } catch (ProblemException e) {
      equal(e.type(), "urn:robotsd:problem:overloaded", "type");
    }
    equal(requests.get(), 1 + RobotsdClient.DEFAULT_MAX_RETRIES, "requests for robotsd's own 503");

    // A proxy's page may follow a request that was acted on, and names no robotsd problem.
    requests.set(0);
    RobotsdClient proxied = RobotsdClient.create(standIn(c, requests, 100, RetryTest::proxyPage));
    try {
      proxied.check("http://a.test/", "Bot");
      throw new AssertionError("no problem");
    } catch (ProblemException e) {
      equal(e.status(), 503, "status");
      equal(e.type(), "about:blank", "a page is not robotsd's problem");
      check(e.detail().contains("503 Service Unavailable"), "the page in detail: " + e.detail());
    }
    equal(requests.get(), 1, "requests for a proxy's 503");

    // Nor is a JSON 503 that is not problem+json of robotsd's type.
    requests.set(0);
    RobotsdClient other = RobotsdClient.create(standIn(c, requests, 100, exchange -> {
      exchange.getResponseHeaders().set("Retry-After", "0");
      Harness.send(exchange, 503, "application/problem+json",
          "{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503}");
    }));
    try {
      other.check("http://a.test/", "Bot");
      throw new AssertionError("no problem");
    } catch (ProblemException e) {
      equal(e.status(), 503, "status");
    }
    equal(requests.get(), 1, "requests for another service's problem");

    // Two of robotsd's own, then its answer: within the default two retries.
    requests.set(0);
    Answer answer = RobotsdClient.create(standIn(c, requests, 2, RetryTest::overloaded)).check("http://a.test/", "Bot");
    check(answer.allowed(), "answered after two 503s");
    equal(requests.get(), 3, "requests");
  }

  @Test
  void anAnswerThatIsNotJsonIsARobotsdException(Cleanup c) throws Exception {
    // A 200 from something that is not robotsd (a captive portal, a misrouted proxy).
    AtomicInteger requests = new AtomicInteger();
    RobotsdClient client = RobotsdClient.create(standIn(c, requests, 100,
        exchange -> Harness.send(exchange, 200, "text/html", "<html>sign in</html>")));
    try {
      client.check("http://a.test/", "Bot");
      throw new AssertionError("no exception");
    } catch (ProblemException | UnavailableException e) {
      throw new AssertionError("an answer was given, and it is no problem: " + e);
    } catch (RobotsdException e) {
      check(e.getMessage().contains("not JSON"), e.getMessage());
    }
    equal(requests.get(), 1, "not retried");
  }

  private static HttpRequest get(String url) {
    return HttpRequest.newBuilder(URI.create(url)).header("User-Agent", "RetryBot/1.0").build();
  }

  @Test
  void aFetchersFirstRequestHasOneRetryBudget(Cleanup c) throws Exception {
    // The site is never reached: robotsd refuses every check.
    Harness.Site site = c.add(new Harness.Site(null, java.util.Map.of()));
    for (boolean noPacing : List.of(false, true)) {
      for (int maxRetries : List.of(0, 2)) {
        AtomicInteger requests = new AtomicInteger();
        RobotsdClient client = RobotsdClient.builder(standIn(c, requests, 100, RetryTest::overloaded))
            .maxRetries(maxRetries).build();
        RobotsdFetcher fetcher = RobotsdFetcher.builder(client).noPacing(noPacing).build();
        String what = (noPacing ? "unpaced" : "paced, its warm-up included") + ", maxRetries " + maxRetries;
        try {
          fetcher.send(get(site.url + "/p/1"), HttpResponse.BodyHandlers.discarding());
          throw new AssertionError("fetched unchecked: " + what);
        } catch (ProblemException e) {
          equal(e.status(), 503, "status: " + what);
        }
        equal(requests.get(), 1 + maxRetries, "checks sent to an overloaded robotsd: " + what);
      }
    }
    equal(site.pages(), List.of(), "pages fetched");

    // Two refusals, then an answer: the warm-up's refusal and the paced check's share the
    // budget, and the fetch goes through on the third check.
    AtomicInteger requests = new AtomicInteger();
    RobotsdFetcher fetcher = RobotsdFetcher.builder(
        RobotsdClient.create(standIn(c, requests, 2, RetryTest::overloaded))).build();
    HttpResponse<Void> page = fetcher.send(get(site.url + "/p/1"), HttpResponse.BodyHandlers.discarding());
    equal(page.statusCode(), 200, "fetched");
    equal(requests.get(), 3, "checks");

    // A proxy's 503 is not retried, by the warm-up either: the request fails at once.
    requests.set(0);
    fetcher = RobotsdFetcher.builder(RobotsdClient.create(standIn(c, requests, 100, RetryTest::proxyPage))).build();
    try {
      fetcher.send(get(site.url + "/p/2"), HttpResponse.BodyHandlers.discarding());
      throw new AssertionError("fetched unchecked");
    } catch (ProblemException e) {
      equal(e.type(), "about:blank", "type");
    }
    equal(requests.get(), 1, "checks behind a proxy's 503");

    // Failing open, either is fetched unchecked, once robotsd's own 503s are past the retries.
    for (Harness.Page refuse : List.<Harness.Page>of(RetryTest::overloaded, RetryTest::proxyPage)) {
      requests.set(0);
      fetcher = RobotsdFetcher.builder(RobotsdClient.create(standIn(c, requests, 100, refuse))).failOpen(true).build();
      int fetched = site.hits("/p/3");
      equal(fetcher.send(get(site.url + "/p/3"), HttpResponse.BodyHandlers.discarding()).statusCode(), 200, "fetched");
      equal(site.hits("/p/3"), fetched + 1, "fetched once, unchecked");
      check(requests.get() <= 1 + RobotsdClient.DEFAULT_MAX_RETRIES, "checks: " + requests.get());
    }
  }
}
