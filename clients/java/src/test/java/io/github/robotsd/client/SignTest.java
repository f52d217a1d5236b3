package io.github.robotsd.client;

import static io.github.robotsd.client.TestRunner.check;
import static io.github.robotsd.client.TestRunner.equal;

import com.fasterxml.jackson.databind.JsonNode;
import io.github.robotsd.client.TestRunner.Cleanup;
import io.github.robotsd.client.TestRunner.Test;
import io.github.robotsd.client.model.Answer;
import io.github.robotsd.client.model.Sign;
import io.github.robotsd.client.model.SignHeaders;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Web Bot Auth: the fetcher and the client's signing calls against the real robotsd holding the
 * committed test key, and a loopback site that verifies every signature it receives with an
 * independent verifier ({@link VerifyingSite}).
 */
final class SignTest {
  private static final String ROBOTS = "User-agent: *\nDisallow: /private\n";

  private static Map<String, Object> pages() {
    Map<String, Object> pages = new LinkedHashMap<>();
    pages.put("/", "<html><body><a href=\"a\">a</a></body></html>");
    pages.put("/a", "<html><body>a</body></html>");
    pages.put("/q?x=1&y=%7E", "<html><body>q</body></html>");
    pages.put("/old", Map.of("redirect", "/new"));
    pages.put("/new", "<html><body>new</body></html>");
    return pages;
  }

  private static HttpRequest get(String url) {
    return HttpRequest.newBuilder(URI.create(url)).header("User-Agent", "JavaSignBot/1.0").build();
  }

  private static HttpRequest head(String url) {
    return HttpRequest.newBuilder(URI.create(url)).method("HEAD", HttpRequest.BodyPublishers.noBody()).build();
  }

  @Test
  void pacedSignedFetchesVerifyAtTheSite(Cleanup c) throws Exception {
    fetchSigned(c, false);
  }

  @Test
  void unpacedSignedFetchesVerifyAtTheSite(Cleanup c) throws Exception {
    fetchSigned(c, true);
  }

  /**
   * Fetches through a signing fetcher as a crawler would: every request the site sees verifies,
   * a disallowed page is never requested, a redirect's second hop is signed for itself, and HEAD
   * is signed as HEAD.
   */
  private static void fetchSigned(Cleanup c, boolean noPacing) throws Exception {
    List<String> args = new ArrayList<>(VerifyingSite.KEYED);
    args.addAll(List.of("--default-crawl-delay", "50ms"));
    RobotsdClient robotsd = Harness.robotsd(c, args.toArray(String[]::new));
    VerifyingSite site = c.add(new VerifyingSite(robotsd, ROBOTS, pages()));
    RobotsdFetcher fetcher = RobotsdFetcher.builder(robotsd).noPacing(noPacing).sign(true).build();

    try {
      fetcher.send(get(site.url("/private/1")), HttpResponse.BodyHandlers.discarding());
      throw new AssertionError("fetched a disallowed page");
    } catch (DisallowedException e) {
      check(e.answer().sign() == null, "a disallowed URL has no signature");
    }
    for (String path : List.of("/", "/a", "/q?x=1&y=%7E")) {
      HttpResponse<String> page = fetcher.send(get(site.url(path)), HttpResponse.BodyHandlers.ofString());
      equal(page.statusCode(), 200, path + " status (401: not verified)");
    }
    // The caller's own signature headers are replaced, not sent beside robotsd's.
    HttpRequest stale = HttpRequest.newBuilder(URI.create(site.url("/a")))
        .header("Signature", "sig1=:AAAA:").header("Signature-Input", "sig1=();created=1").build();
    equal(fetcher.send(stale, HttpResponse.BodyHandlers.discarding()).statusCode(), 200, "a stale signature replaced");
    // robotsd signs the URL as it parses it (WHATWG): the request goes out to that URL.
    HttpResponse<Void> dotted = fetcher.send(get(site.url("/p/../a")), HttpResponse.BodyHandlers.discarding());
    equal(dotted.statusCode(), 200, "/p/../a status");
    equal(dotted.uri().getRawPath(), "/a", "the path robotsd signed");
    // A redirect is the caller's: its second hop is checked and signed for itself.
    HttpResponse<Void> moved = fetcher.send(get(site.url("/old")), HttpResponse.BodyHandlers.discarding());
    equal(moved.statusCode(), 301, "/old status");
    URI next = moved.uri().resolve(moved.headers().firstValue("Location").orElseThrow());
    equal(fetcher.send(get(next.toString()), HttpResponse.BodyHandlers.discarding()).statusCode(), 200, "/new status");
    equal(fetcher.send(head(site.url("/a")), HttpResponse.BodyHandlers.discarding()).statusCode(), 200, "HEAD /a status");
    // robots.txt goes through unasked, unsigned, as ever (the site answers it to anyone).
    HttpResponse<Void> robots = fetcher.send(get(site.url("/robots.txt")), HttpResponse.BodyHandlers.discarding());
    equal(robots.statusCode(), 200, "robots.txt status");

    site.awaitRequests("GET", "/a", 3);
    site.awaitRequests("HEAD", "/a", 1);
    for (String path : List.of("/", "/q?x=1&y=%7E", "/old", "/new")) {
      site.awaitRequests("GET", path, 1);
    }
    List<JsonNode> robotsTxt = site.awaitRequests("GET", "/robots.txt", 2);
    // robotsd's own fetch, signed, and the fetcher's.
    equal(robotsTxt.stream().map(r -> r.path("verified").asBoolean()).toList(), List.of(true, false), "robots.txt verified");
    List<JsonNode> seen = site.requests();
    for (JsonNode request : seen) {
      check(request.path("verified").asBoolean() || request.path("path").asText().equals("/robots.txt"),
          "a request the site could not verify: " + request);
      check(!request.path("path").asText().startsWith("/private"), "a disallowed page requested: " + request);
    }
    // Each fetch once, and robots.txt twice.
    equal(seen.size(), 10, "requests the site saw: " + seen);
    fetcher.flushReports();
  }

  @Test
  void aSignatureAWaitOutlivedIsAskedForAgain(Cleanup c) throws Exception {
    // Signatures of 1 s, and a crawl-delay of 7 s kept by the fetcher itself (no pacing): the
    // second request's first signature is past its expires, and past the verifier's 5 s of
    // tolerance for clock skew, when its start comes.
    List<String> args = new ArrayList<>(VerifyingSite.KEYED);
    args.addAll(List.of("--wba-ttl", "1s"));
    RobotsdClient robotsd = Harness.robotsd(c, args.toArray(String[]::new));
    VerifyingSite site = c.add(new VerifyingSite(robotsd, "User-agent: *\nCrawl-delay: 7\n", pages()));
    List<Answer> answers = new ArrayList<>();
    RobotsdFetcher fetcher = RobotsdFetcher.builder(robotsd).userAgent("JavaSignBot").noPacing(true).sign(true)
        .onAnswer((r, a) -> answers.add(a)).build();
    equal(fetcher.send(get(site.url("/")), HttpResponse.BodyHandlers.discarding()).statusCode(), 200, "/ status");
    equal(fetcher.send(get(site.url("/a")), HttpResponse.BodyHandlers.discarding()).statusCode(), 200, "/a status");
    equal(answers.size(), 3, "answers: the second request's asked for again after its wait");
    check(site.awaitRequests("GET", "/a", 1).get(0).path("verified").asBoolean(), "/a verified");
  }

  @Test
  void aSignatureIsOutlivedPastHalfItsLife(Cleanup c) {
    Sign sign = new Sign("GET", "https://example.com/", new SignHeaders("a", "i", "s"), "k",
        "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z");
    check(!RobotsdFetcher.outlived(sign, 29_000_000_000L), "29 s of 60");
    check(RobotsdFetcher.outlived(sign, 31_000_000_000L), "31 s of 60");
    check(RobotsdFetcher.outlived(new Sign("GET", "https://example.com/", null, "k", "?", "?"), 0),
        "a life that cannot be read asks again");
  }

  @Test
  void signingOffIsAProblemAndNothingIsSentEvenFailingOpen(Cleanup c) throws Exception {
    RobotsdClient keyed = Harness.robotsd(c, VerifyingSite.KEYED.toArray(String[]::new));
    VerifyingSite site = c.add(new VerifyingSite(keyed, ROBOTS, pages()));
    RobotsdClient keyless = Harness.robotsd(c);
    for (boolean noPacing : new boolean[] {false, true}) {
      for (boolean failOpen : new boolean[] {false, true}) {
        RobotsdFetcher fetcher = RobotsdFetcher.builder(keyless).noPacing(noPacing).failOpen(failOpen).sign(true).build();
        try {
          fetcher.send(get(site.url("/a")), HttpResponse.BodyHandlers.discarding());
          throw new AssertionError("sent /a without a signature");
        } catch (ProblemException e) {
          equal(e.type(), ProblemException.SIGNING_OFF, "problem");
          equal(e.status(), 400, "status");
        }
      }
    }
    // A signed request after them, logged after any of theirs would have been.
    RobotsdFetcher signing = RobotsdFetcher.builder(keyed).sign(true).build();
    equal(signing.send(get(site.url("/")), HttpResponse.BodyHandlers.discarding()).statusCode(), 200, "/ status");
    site.awaitRequests("GET", "/", 1);
    equal(site.requests("/a"), List.of(), "requests for /a");
    // robots.txt: the keyed robotsd's own fetch alone; the keyless one fetched nothing.
    equal(site.requests("/robots.txt").size(), 1, "requests for robots.txt: " + site.requests());
  }

  @Test
  void anotherAgentIsAProblemAndNothingIsSentEvenFailingOpen(Cleanup c) throws Exception {
    List<String> args = new ArrayList<>(VerifyingSite.KEYED);
    args.addAll(List.of("--wba-product-token", "JavaSignBot"));
    RobotsdClient robotsd = Harness.robotsd(c, args.toArray(String[]::new));
    VerifyingSite site = c.add(new VerifyingSite(robotsd, ROBOTS, pages()));
    RobotsdFetcher other = RobotsdFetcher.builder(robotsd).userAgent("OtherBot").failOpen(true).sign(true).build();
    try {
      other.send(get(site.url("/a")), HttpResponse.BodyHandlers.discarding());
      throw new AssertionError("sent /a for another agent");
    } catch (ProblemException e) {
      equal(e.type(), ProblemException.SIGN_OTHER_AGENT, "problem");
    }
    // The request's own User-Agent names the token: signed.
    RobotsdFetcher own = RobotsdFetcher.builder(robotsd).failOpen(true).sign(true).build();
    equal(own.send(get(site.url("/")), HttpResponse.BodyHandlers.discarding()).statusCode(), 200, "/ status");
    check(site.awaitRequests("GET", "/", 1).get(0).path("verified").asBoolean(), "/ verified");
    equal(site.requests("/a"), List.of(), "requests for /a");
  }

  @Test
  void otherMethodsAreRefusedBeforeRobotsdIsAsked(Cleanup c) throws Exception {
    Harness.Site site = Harness.site51(c);
    // No robotsd answers here: the refusal comes first, and failing open does not send it.
    RobotsdClient down = RobotsdClient.create("http://127.0.0.1:" + Harness.freePort());
    RobotsdFetcher fetcher = RobotsdFetcher.builder(down).failOpen(true).sign(true).build();
    for (String method : List.of("POST", "PUT", "DELETE", "OPTIONS")) {
      HttpRequest request = HttpRequest.newBuilder(URI.create(site.url + "/p/1"))
          .method(method, HttpRequest.BodyPublishers.ofString("x")).build();
      try {
        fetcher.send(request, HttpResponse.BodyHandlers.discarding());
        throw new AssertionError("sent " + method + " unsigned");
      } catch (UnavailableException e) {
        throw new AssertionError("asked robotsd to sign " + method, e);
      } catch (RobotsdException e) {
        check(e.getMessage().contains("signs GET and HEAD requests only"), e.getMessage());
      }
    }
    equal(site.hits("/p/1"), 0, "requests sent");
  }

  @Test
  void aSigningFetcherFollowsNoRedirectOfItsOwn(Cleanup c) {
    RobotsdClient robotsd = RobotsdClient.create("http://127.0.0.1:1");
    HttpClient following = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL).build();
    try {
      RobotsdFetcher.builder(robotsd).httpClient(following).sign(true).build();
      throw new AssertionError("a signing fetcher whose client follows redirects");
    } catch (IllegalStateException e) {
      check(e.getMessage().contains("Redirect.NEVER"), e.getMessage());
    }
    RobotsdFetcher.builder(robotsd).httpClient(following).build();
    RobotsdFetcher.builder(robotsd)
        .httpClient(HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build()).sign(true).build();
  }

  /** Sends the request a signature was made for, as robotsd made it. */
  private static int send(Sign sign) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(sign.url()))
        .method(sign.method(), HttpRequest.BodyPublishers.noBody());
    sign.headers().asMap().forEach(request::header);
    return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  @Test
  void theClientsSigningCallsAnswerSignaturesThatVerify(Cleanup c) throws Exception {
    List<String> args = new ArrayList<>(VerifyingSite.KEYED);
    args.addAll(List.of("--default-crawl-delay", "50ms"));
    RobotsdClient robotsd = Harness.robotsd(c, args.toArray(String[]::new));
    VerifyingSite site = c.add(new VerifyingSite(robotsd, ROBOTS, pages()));

    Answer checked = robotsd.checkSigned("GET", site.url("/a"), "JavaSignBot");
    check(checked.allowed() && checked.sign() != null, "signed: " + checked);
    equal(checked.sign().method(), "GET", "method");
    equal(checked.sign().url(), site.url("/a"), "url");
    check(checked.sign().headers().signatureInput().contains("keyid=\"" + checked.sign().keyid() + "\""),
        "Signature-Input names the key: " + checked.sign().headers());
    equal(send(checked.sign()), 200, "GET /a");
    check(robotsd.checkSigned("GET", site.url("/private/1"), "JavaSignBot").sign() == null, "disallowed: no signature");
    check(robotsd.check(site.url("/a"), "JavaSignBot").sign() == null, "not asked: no signature");

    Answer paced = robotsd.checkPacedSigned("HEAD", site.url("/"), "JavaSignBot");
    check(paced.pace() != null && paced.pace().reserved() && paced.sign() != null, "paced and signed: " + paced);
    Thread.sleep(paced.pace().waitDuration().toMillis());
    equal(send(paced.sign()), 200, "HEAD /");

    // A redirect's next hop, with POST /v1/sign.
    Answer hop = robotsd.sign("GET", site.url("/new"), false, "JavaSignBot");
    equal(send(hop.sign()), 200, "GET /new");

    List<BatchResult> batch = robotsd.checkManySigned("GET",
        List.of(site.url("/q?x=1&y=%7E"), site.url("/private/2")), "JavaSignBot");
    check(batch.get(0).answer().sign() != null && batch.get(1).answer().sign() == null, "batch: " + batch);
    equal(send(batch.get(0).answer().sign()), 200, "GET /q");
    List<BatchResult> pacedBatch = robotsd.checkManyPacedSigned("GET", List.of(site.url("/old")), "JavaSignBot");
    Answer slot = pacedBatch.get(0).answer();
    check(slot.pace() != null && slot.sign() != null, "paced batch: " + slot);
    Thread.sleep(slot.pace().waitDuration().toMillis());
    equal(send(slot.sign()), 301, "GET /old");

    try {
      robotsd.checkSigned("POST", site.url("/a"), "JavaSignBot");
      throw new AssertionError("robotsd signed a POST");
    } catch (ProblemException e) {
      equal(e.parameter(), "sign", "parameter");
    }
    for (JsonNode request : site.awaitRequests("GET", "/old", 1)) {
      check(request.path("verified").asBoolean(), "verified: " + request);
    }
    for (JsonNode request : site.requests()) {
      check(request.path("verified").asBoolean(), "a request the site could not verify: " + request);
    }
    equal(site.requests().size(), 6, "requests: robots.txt and the five sent: " + site.requests());
  }
}
