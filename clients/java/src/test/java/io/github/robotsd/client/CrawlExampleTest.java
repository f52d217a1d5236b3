package io.github.robotsd.client;

import static io.github.robotsd.client.TestRunner.check;
import static io.github.robotsd.client.TestRunner.equal;

import io.github.robotsd.client.TestRunner.Cleanup;
import io.github.robotsd.client.TestRunner.Test;
import io.github.robotsd.examples.Crawl;
import java.util.ArrayList;
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
    List<BatchResult> verdicts = client.checkManyVerdicts(List.of("JavaExampleBot"), urls);
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

  private static void html(com.sun.net.httpserver.HttpExchange e, String body) throws java.io.IOException {
    Harness.send(e, 200, "text/html; charset=utf-8", "<!DOCTYPE html><html><body>" + body + "</body></html>");
  }
}
