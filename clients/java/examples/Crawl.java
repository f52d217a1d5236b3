package io.github.robotsd.examples;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.robotsd.client.DisallowedException;
import io.github.robotsd.client.RobotsdClient;
import io.github.robotsd.client.RobotsdFetcher;
import io.github.robotsd.client.model.PageAnswer;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A small breadth-first crawler of one site through {@link RobotsdFetcher}, as a JVM crawler
 * would fetch: it never sleeps itself, the fetcher paces it (a slot for the whole fleet each
 * request, by default; {@code --no-pace} keeps the crawl-delay for this crawler alone). After
 * each fetch it asks robotsd about the page ({@link RobotsdClient#page}) and does not follow the
 * links of a page that says nofollow for it. A redirect's target on the site is queued as a page
 * of its own: the fetcher checks (and, with {@code --sign}, signs) every hop. It prints one line
 * of JSON: the paths fetched, the paths robotsd refused, and the fetched pages that said nofollow
 * and noindex, each sorted.
 *
 * <pre>
 * java -cp robotsd-client-0.2.0.jar:build/examples:JACKSON io.github.robotsd.examples.Crawl \
 *   --robotsd http://127.0.0.1:8080 --start http://127.0.0.1:8000/ --ua ExampleBot [--no-pace] [--sign]
 * </pre>
 */
public final class Crawl {
  private Crawl() {}

  /** The test site's pages are plain HTML: a regular expression finds their links. */
  private static final Pattern LINK = Pattern.compile("href=\"([^\"]+)\"");

  /**
   * What a crawl did, paths each sorted.
   *
   * @param fetched the pages fetched
   * @param disallowed the pages robotsd refused
   * @param nofollow the fetched pages whose links were not followed
   * @param noindex the fetched pages an indexer would leave out
   */
  public record Result(List<String> fetched, List<String> disallowed, List<String> nofollow, List<String> noindex) {}

  /**
   * Runs the crawler: {@code --robotsd URL --start URL --ua AGENT [--no-pace] [--sign]}
   * ({@code --sign}: every request signed by robotsd for Web Bot Auth).
   *
   * @param args the command line
   * @throws Exception when the crawl fails
   */
  public static void main(String[] args) throws Exception {
    String robotsd = null;
    String start = null;
    String ua = null;
    boolean noPace = false;
    boolean sign = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--robotsd" -> robotsd = args[++i];
        case "--start" -> start = args[++i];
        case "--ua" -> ua = args[++i];
        case "--no-pace" -> noPace = true;
        case "--sign" -> sign = true;
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (robotsd == null || start == null || ua == null) {
      System.err.println("usage: Crawl --robotsd URL --start URL --ua AGENT [--no-pace] [--sign]");
      System.exit(2);
    }
    Result result = crawl(RobotsdClient.create(robotsd), start, ua, noPace, sign);
    System.out.println(new ObjectMapper().writeValueAsString(result));
  }

  /**
   * Crawls the site of {@code start} through robotsd.
   *
   * @param client the robotsd to ask
   * @param start the first page
   * @param ua the crawler's user agent
   * @param noPacing keep the crawl-delay for this crawler alone, rather than for the fleet
   * @return what was fetched and refused
   * @throws Exception when a fetch fails otherwise than by robots.txt
   */
  public static Result crawl(RobotsdClient client, String start, String ua, boolean noPacing) throws Exception {
    return crawl(client, start, ua, noPacing, false);
  }

  /**
   * Crawls the site of {@code start} through robotsd, each request signed by robotsd when {@code
   * sign} (Web Bot Auth, {@link RobotsdFetcher.Builder#sign}).
   *
   * @param client the robotsd to ask
   * @param start the first page
   * @param ua the crawler's user agent
   * @param noPacing keep the crawl-delay for this crawler alone, rather than for the fleet
   * @param sign have robotsd sign every request
   * @return what was fetched and refused
   * @throws Exception when a fetch fails otherwise than by robots.txt
   */
  public static Result crawl(RobotsdClient client, String start, String ua, boolean noPacing, boolean sign)
      throws Exception {
    RobotsdFetcher fetcher = RobotsdFetcher.builder(client).userAgent(ua).noPacing(noPacing).sign(sign).build();
    URI origin = URI.create(start);
    Result out = new Result(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
    Set<String> seen = new HashSet<>(Set.of(origin.toString()));
    Deque<URI> queue = new ArrayDeque<>(List.of(origin));
    while (!queue.isEmpty()) {
      URI page = queue.poll();
      HttpRequest request = HttpRequest.newBuilder(page).header("User-Agent", ua)
          .timeout(Duration.ofSeconds(30)).build();
      HttpResponse<byte[]> response;
      try {
        response = fetcher.send(request, HttpResponse.BodyHandlers.ofByteArray());
      } catch (DisallowedException e) {
        System.err.println("skipped: " + e.getMessage());
        out.disallowed().add(page.getPath());
        continue;
      }
      out.fetched().add(page.getPath());
      int status = response.statusCode();
      if (status >= 300 && status < 400) {
        // The fetcher follows no redirect: the target is a page of its own, checked in its turn.
        response.headers().firstValue("Location").ifPresent(to -> queue(response.uri().resolve(to), origin, seen, queue));
        continue;
      }
      PageAnswer answer;
      try {
        answer = client.page(ua, response);
      } catch (RuntimeException e) {
        // Its rules are unknown: its links are not followed (fail closed, as the fetcher).
        System.err.println("no answer about " + page + ": " + e.getMessage());
        continue;
      }
      if (!answer.index()) {
        out.noindex().add(page.getPath());
      }
      if (!answer.follow()) {
        out.nofollow().add(page.getPath());
        continue;
      }
      Matcher links = LINK.matcher(new String(response.body(), StandardCharsets.UTF_8));
      while (links.find()) {
        queue(response.uri().resolve(links.group(1)), origin, seen, queue);
      }
    }
    // The reports of the last answers reach robotsd before the crawler exits.
    fetcher.flushReports();
    for (List<String> list : List.of(out.fetched(), out.disallowed(), out.nofollow(), out.noindex())) {
      Collections.sort(list);
    }
    return out;
  }

  /** Queues {@code next} once, if it is on the site. */
  private static void queue(URI next, URI origin, Set<String> seen, Deque<URI> queue) {
    if (!origin.getScheme().equals(next.getScheme()) || !origin.getAuthority().equals(next.getAuthority())) {
      return;
    }
    if (seen.add(next.toString())) {
      queue.add(next);
    }
  }
}
