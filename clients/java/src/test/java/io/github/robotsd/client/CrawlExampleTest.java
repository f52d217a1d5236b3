package io.github.robotsd.client;

import static io.github.robotsd.client.TestRunner.check;
import static io.github.robotsd.client.TestRunner.equal;

import io.github.robotsd.client.TestRunner.Cleanup;
import io.github.robotsd.client.TestRunner.Test;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.robotsd.examples.Crawl;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The example crawler over loopback sites, through the real robotsd. */
final class CrawlExampleTest {

  @Test
  void theExampleFetchesExactlyThePagesRobotsdAllowsOfThe51(Cleanup c) throws Exception {
    Harness.Site site = Harness.site51(c);
    RobotsdClient client = Harness.robotsd(c);
    Crawl.Result result = Crawl.crawl(client, site.url + "/", "JavaExampleBot", false);

    // What robotsd allows, asked in one batch, not written down here.
    List<String> urls = new ArrayList<>();
    for (String p : Harness.sitePaths()) {
      urls.add(site.url + p);
    }
    List<BatchResult> verdicts = client.checkManyVerdicts(urls, "JavaExampleBot");
    List<String> allowed = new ArrayList<>();
    List<String> refused = new ArrayList<>();
    for (int i = 0; i < urls.size(); i++) {
      (verdicts.get(i).answer().allowed() ? allowed : refused).add(Harness.sitePaths().get(i));
    }
    allowed.sort(null);
    refused.sort(null);
    equal(result.fetched(), allowed, "fetched");
    equal(result.disallowed(), refused, "refused");
    equal(site.pages(), allowed, "the pages the site served");
    equal(allowed.size(), 36, "1 index + 30 pages + 5 under /private/public");
    for (String path : allowed) {
      equal(site.hits(path), 1, path + " fetches");
    }
    equal(site.hits("/robots.txt"), 1, "robots.txt fetched once, by robotsd");
    // Crawl-delay: 0.01 for the whole fleet, kept at the site.
    check(site.closestGapMs() >= 10 - 5, "two fetches " + site.closestGapMs() + " ms apart");
  }

  @Test
  void theExampleLeavesANofollowPagesLinksAlone(Cleanup c) throws Exception {
    Map<String, Harness.Page> pages = Map.of(
        "/", e -> html(e, "<a href=\"/a\">a</a> <a href=\"/meta\">m</a> <a href=\"/header\">h</a> <a href=\"/private/1\">p</a>"),
        "/a", e -> html(e, "<meta name=\"robots\" content=\"noindex\"><a href=\"/a/1\">a/1</a>"),
        "/meta", e -> html(e, "<meta name=\"robots\" content=\"nofollow\"><a href=\"/hidden/1\">x</a>"),
        "/header", e -> {
          e.getResponseHeaders().add("X-Robots-Tag", "JavaExampleBot: nofollow");
          html(e, "<a href=\"/hidden/2\">x</a>");
        });
    Harness.Site site = c.add(new Harness.Site("User-agent: *\nDisallow: /private/\nCrawl-delay: 0.01\n", pages));
    Crawl.Result result = Crawl.crawl(Harness.robotsd(c), site.url + "/", "JavaExampleBot", false);
    equal(result, new Crawl.Result(List.of("/", "/a", "/a/1", "/header", "/meta"), List.of("/private/1"),
        List.of("/header", "/meta"), List.of("/a")), "crawl");
    equal(site.hits("/hidden/1") + site.hits("/hidden/2"), 0, "fetches of a nofollow page's links");
  }

  @Test
  void theExampleWithSignCrawlsTheVerifyingSiteSigned(Cleanup c) throws Exception {
    List<String> args = new ArrayList<>(VerifyingSite.KEYED);
    args.addAll(List.of("--default-crawl-delay", "50ms"));
    RobotsdClient robotsd = Harness.robotsd(c, args.toArray(String[]::new));
    Map<String, Object> pages = new LinkedHashMap<>();
    pages.put("/", "<a href=\"a\">a</a> <a href=\"old\">o</a> <a href=\"private/1\">p</a> <a href=\"q?x=1\">q</a>");
    pages.put("/a", "<a href=\"new\">n</a> <a href=\"./\">i</a> <a href=\"x/../q?x=1\">q</a>");
    pages.put("/old", Map.of("redirect", "/new"));
    pages.put("/new", "<a href=\"a\">a</a>");
    pages.put("/q?x=1", "q");
    VerifyingSite site = c.add(new VerifyingSite(robotsd, "User-agent: *\nDisallow: /private\n", pages));

    // As the fleet test runs it: a program, its one line of JSON on stdout.
    Process crawl = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), "io.github.robotsd.examples.Crawl",
        "--robotsd", robotsd.baseUrl(), "--start", site.url("/"), "--ua", "JavaExampleBot", "--sign")
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    String out = new String(crawl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    equal(crawl.waitFor(), 0, "the crawler's exit status");
    Crawl.Result result = new ObjectMapper().readValue(out, Crawl.Result.class);
    equal(result, new Crawl.Result(List.of("/", "/a", "/new", "/old", "/q"), List.of("/private/1"), List.of(), List.of()),
        "crawl");
    equal(out.strip().lines().count(), 1L, "lines of output");

    site.awaitRequests("GET", "/q?x=1", 1);
    List<JsonNode> seen = site.requests();
    for (JsonNode request : seen) {
      check(request.path("verified").asBoolean(), "a request the site could not verify: " + request);
      check(!request.path("path").asText().startsWith("/private"), "a disallowed page requested: " + request);
    }
    equal(seen.size(), 6, "robots.txt, by robotsd, and the five pages once each: " + seen);
  }

  private static void html(com.sun.net.httpserver.HttpExchange e, String body) throws java.io.IOException {
    Harness.send(e, 200, "text/html; charset=utf-8", "<!DOCTYPE html><html><body>" + body + "</body></html>");
  }
}
