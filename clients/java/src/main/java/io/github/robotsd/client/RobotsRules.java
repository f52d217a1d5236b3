package io.github.robotsd.client;

import io.github.robotsd.client.model.Answer;
import io.github.robotsd.client.model.Robots;
import io.github.robotsd.client.model.Sitemap;
import java.util.List;

/**
 * One origin's robots.txt rules for one agent, shaped like crawler-commons' {@code
 * BaseRobotRules} (which Apache Nutch and StormCrawler use): {@link #isAllowed}, {@link
 * #getCrawlDelay} in milliseconds, {@link #getSitemaps}, {@link #isAllowAll}, {@link
 * #isAllowNone} and {@link #isDeferVisits}, so that an adapter to a framework's own rules type
 * is a few lines. robotsd stays the one parser: {@link #isAllowed} asks it each time (its cache
 * answers, with {@code view=verdict}), so the answer follows the file robotsd holds now.
 *
 * <p>The crawl-delay is what robotsd reports for the agent's group, for the framework to keep
 * as it keeps any crawl-delay; fleet-wide pacing comes with {@link RobotsdFetcher} (or {@link
 * RobotsdClient#checkPaced}), not through this object.
 */
public final class RobotsRules {

  /** {@link #getCrawlDelay} when robots.txt states none, as crawler-commons has it. */
  public static final long UNSET_CRAWL_DELAY = Long.MIN_VALUE;

  private final RobotsdClient client;
  private final String ua;
  private final Answer probe;
  private final Robots robots;

  private RobotsRules(RobotsdClient client, String ua, Answer probe, Robots robots) {
    this.client = client;
    this.ua = ua;
    this.probe = probe;
    this.robots = robots;
  }

  static RobotsRules load(RobotsdClient client, String url, String ua) {
    // The check first: it fetches the file if robotsd has none, and /v1/robots then reads it.
    Answer probe = client.check(url, ua);
    Robots robots = client.robots(url, false);
    return new RobotsRules(client, ua, probe, robots);
  }

  /**
   * Whether the agent may fetch {@code url}, as robotsd answers now.
   *
   * @param url the URL
   * @return true when allowed
   * @throws RobotsdException when robotsd cannot answer: the caller decides whether to fetch
   */
  public boolean isAllowed(String url) {
    return client.checkVerdict(url, ua).allowed();
  }

  /**
   * The agent's crawl-delay in milliseconds, or {@link #UNSET_CRAWL_DELAY} when robots.txt
   * states none.
   *
   * @return the crawl-delay
   */
  public long getCrawlDelay() {
    Double seconds = probe.crawlDelay();
    return seconds == null ? UNSET_CRAWL_DELAY : Math.round(seconds * 1000);
  }

  /**
   * The sitemaps robots.txt lists, in its order.
   *
   * @return their URLs
   */
  public List<String> getSitemaps() {
    if (robots.parsed() == null || robots.parsed().sitemaps() == null) {
      return List.of();
    }
    return robots.parsed().sitemaps().stream().map(Sitemap::url).toList();
  }

  /**
   * Whether everything is allowed because robotsd answers as if the origin had no robots.txt: a
   * 4xx, a broken redirect chain, or a file unreachable for 30 days or never fetched in 12 hours
   * of trying (the reasons {@code no_robots_txt}, {@code redirect_limit}, {@code
   * unreachable_30_days} and {@code unreachable_no_copy}).
   *
   * @return true when every URL of the origin is allowed
   */
  public boolean isAllowAll() {
    String reason = probe.reason();
    return "no_robots_txt".equals(reason)
        || "redirect_limit".equals(reason)
        || "unreachable_30_days".equals(reason)
        || "unreachable_no_copy".equals(reason);
  }

  /**
   * Whether nothing is allowed because robots.txt is unreachable (a 5xx or no answer) and
   * robotsd has no copy to answer from.
   *
   * @return true when robotsd disallows the whole origin for now
   */
  public boolean isAllowNone() {
    return "unreachable_disallow_all".equals(probe.reason());
  }

  /**
   * Whether visits should wait: as crawler-commons says of a robots.txt answered with a 5xx,
   * robotsd disallows the whole origin until it can fetch the file.
   *
   * @return true while the file is unreachable and nothing is allowed
   */
  public boolean isDeferVisits() {
    return isAllowNone();
  }

  /**
   * What robotsd holds for the origin, as read when these rules were made.
   *
   * @return the origin's state, parsed file and pacing state
   */
  public Robots robots() {
    return robots;
  }
}
