package crawlercommons.robots;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * A stand-in for crawler-commons' BaseRobotRules, with its public members only, so that the
 * README's Nutch and StormCrawler adapter compiles here (crawler-commons is not installable
 * offline). Not shipped in the jar.
 */
@SuppressWarnings("serial")
public abstract class BaseRobotRules implements Serializable {
  public static final long UNSET_CRAWL_DELAY = Long.MIN_VALUE;

  private long crawlDelay = UNSET_CRAWL_DELAY;
  private boolean deferVisits;
  private final List<String> sitemaps = new ArrayList<>();

  public abstract boolean isAllowed(String url);

  public abstract boolean isAllowAll();

  public abstract boolean isAllowNone();

  public long getCrawlDelay() {
    return crawlDelay;
  }

  public void setCrawlDelay(long crawlDelay) {
    this.crawlDelay = crawlDelay;
  }

  public boolean isDeferVisits() {
    return deferVisits;
  }

  public void setDeferVisits(boolean deferVisits) {
    this.deferVisits = deferVisits;
  }

  public void addSitemap(String sitemap) {
    sitemaps.add(sitemap);
  }

  public List<String> getSitemaps() {
    return sitemaps;
  }
}
