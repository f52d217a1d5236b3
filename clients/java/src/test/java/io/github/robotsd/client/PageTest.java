package io.github.robotsd.client;

import static io.github.robotsd.client.TestRunner.check;
import static io.github.robotsd.client.TestRunner.equal;

import io.github.robotsd.client.TestRunner.Cleanup;
import io.github.robotsd.client.TestRunner.Test;
import io.github.robotsd.client.model.PageAnswer;
import io.github.robotsd.client.model.PageRule;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

/** After the fetch: a page's own rules, from loopback pages, through the real robotsd. */
final class PageTest {
  private static HttpResponse<byte[]> fetch(String url) throws Exception {
    return HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create(url)).header("User-Agent", "ExampleBot/1.0").build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }

  @Test
  void aPagesHeadersAndMetaTagsAreReadForTheCrawler(Cleanup c) throws Exception {
    Map<String, Harness.Page> pages = Map.of(
        "/header", e -> {
          e.getResponseHeaders().add("X-Robots-Tag", "examplebot: nofollow");
          e.getResponseHeaders().add("Set-Cookie", "secret=1");
          Harness.send(e, 200, "text/html", "<p>hello</p>");
        },
        "/meta", e -> Harness.send(e, 200, "text/html; charset=utf-8",
            "<html><head>\n<meta name=\"robots\" content=\"noindex\">\n<meta name=\"otherbot\" content=\"nofollow\">"
                + "</head><body><!-- <meta name=\"robots\" content=\"nofollow\"> --></body></html>"),
        "/private/x", e -> Harness.send(e, 200, "text/html", "<meta name=\"robots\" content=\"noindex\">"));
    Harness.Site site = c.add(new Harness.Site("User-agent: *\nDisallow: /private/\n", pages));
    RobotsdClient client = Harness.robotsd(c);

    PageAnswer header = client.page(null, fetch(site.url + "/header"));
    check(!header.follow() && header.index(), "nofollow from the header: " + header.robots());
    PageRule rule = header.robots().rules().get(0);
    equal(rule.header(), 0, "the header's position among those sent");
    equal(Pages.headers(fetch(site.url + "/header").headers()).stream().map(p -> p.get(0)).toList(),
        java.util.List.of("X-Robots-Tag", "Content-Type"), "only the headers robotsd reads");

    PageAnswer meta = client.page("ExampleBot", fetch(site.url + "/meta"));
    check(!meta.index() && meta.follow(), "noindex from the meta tag, another's nofollow and a comment's not: " + meta.robots());
    equal(meta.robots().rules().get(0).line(), 2, "the tag's line");
    equal(meta.encoding(), "UTF-8", "read in its charset");

    PageAnswer disallowed = client.page("ExampleBot", fetch(site.url + "/private/x"));
    check(!disallowed.allowed() && disallowed.robots() == null && disallowed.index() && disallowed.follow(),
        "no rules read of a disallowed page: " + disallowed);
  }

  @Test
  void aPageLongerThanRobotsdReadsIsCut(Cleanup c) throws Exception {
    String big = "<html><body>" + "x".repeat(3 << 20) + "<meta name=\"robots\" content=\"noindex\"></body></html>";
    Harness.Site site = c.add(new Harness.Site("User-agent: *\n", Map.of("/big", e -> Harness.send(e, 200, "text/html", big))));
    RobotsdClient client = Harness.robotsd(c);
    PageAnswer answer = client.page("ExampleBot", fetch(site.url + "/big"));
    check(Boolean.TRUE.equals(answer.documentCut()) && answer.index(), "cut to 2 MiB, the late tag unread: " + answer.robots());
  }
}
