package io.github.robotsd.client;

import io.github.robotsd.client.model.Answer;
import io.github.robotsd.client.model.Robots;
import io.github.robotsd.client.model.Sitemap;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One origin's robots.txt rules for one agent, shaped like crawler-commons' {@code
 * BaseRobotRules} (which Apache Nutch and StormCrawler keep per host, for hours, and ask from
 * their fetcher threads): {@link #isAllowed}, {@link #getCrawlDelay} in milliseconds, {@link
 * #getSitemaps}, {@link #isAllowAll}, {@link #isAllowNone} and {@link #isDeferVisits}, so that an
 * adapter to a framework's own rules type is a few lines.
 *
 * <p><b>What it holds, and when it asks robotsd.</b> robotsd stays the one parser and matcher:
 * no rule is matched here (robotsd's verdict also rests on how it reads the URL, which agents'
 * groups apply, and the state of the origin's fetches, none of which a copy of the rules
 * carries). The object holds robotsd's verdicts, one per URL asked, at most {@link
 * Builder#maxUrls} of them (the least recently asked go first), with the origin's crawl-delay,
 * sitemaps and state:
 *
 * <ul>
 *   <li>Made ({@link RobotsdClient#rules}, {@link Builder#build}): two calls, {@code GET
 *       /v1/check} for the URL given and {@code GET /v1/robots}.
 *   <li>{@link #isAllowed}: a URL asked before is answered from memory. A URL not held yet is
 *       one call ({@code GET /v1/check?view=verdict}), and its verdict is kept. {@link
 *       #prefetch} asks for many at once ({@code POST /v1/check}).
 *   <li>In the background, {@link Builder#refreshEvery} after the last refresh (5 min by
 *       default), the first use of the object asks robotsd again for all of it, on an executor
 *       (by default two shared daemon threads): the file, the crawl-delay and every verdict
 *       held, {@link RobotsdClient#MAX_BATCH} URLs a request. Until that answers, the verdicts
 *       held answer, as robotsd answers from its stale copy while it refetches. An object no
 *       longer used is never refreshed: one a framework drops costs nothing.
 * </ul>
 *
 * <p><b>When robotsd gives no verdict</b> (down, unreachable, its 503s past the retries, or a
 * problem such as an {@code ftp:} URL), nothing is thrown, by any method: a verdict held
 * answers still (the last one robotsd gave), and a URL not held is answered by the failure mode,
 * disallowed by default ({@link Builder#failOpen}: allowed). After no answer at all (or a 5xx)
 * URLs not held are answered by the failure mode at once, without asking, for {@link
 * Builder#recheckAfterFailure} (10 s by default), and the next refresh is due then too: a
 * fetcher thread waits on a dead robotsd once, not once per URL. {@link #lastError} says what
 * failed. Rules made while robotsd cannot answer hold nothing: no crawl-delay, no sitemaps, and
 * {@link #isDeferVisits} is true when failing closed.
 *
 * <p>The crawl-delay is what robotsd reports for the agent's group, for the framework to keep
 * as it keeps any crawl-delay; fleet-wide pacing comes with {@link RobotsdFetcher} (or {@link
 * RobotsdClient#checkPaced}), not through this object. Safe for concurrent use.
 */
public final class RobotsRules implements AutoCloseable {

  /**
   * {@link #getCrawlDelay} when robots.txt states none (or the rules hold nothing), as
   * crawler-commons has it: {@link Long#MIN_VALUE}, which {@code Thread.sleep} refuses. {@link
   * #crawlDelay} says the same as an empty {@link Optional}.
   */
  public static final long UNSET_CRAWL_DELAY = Long.MIN_VALUE;

  /** How often, by default, the rules are asked for again while they are used. */
  public static final Duration DEFAULT_REFRESH = Duration.ofMinutes(5);

  /** How many verdicts the rules hold, by default: one batch of robotsd's. */
  public static final int DEFAULT_MAX_URLS = RobotsdClient.MAX_BATCH;

  /** How long, by default, URLs not held are not asked for after robotsd gave no answer. */
  public static final Duration DEFAULT_RECHECK_AFTER_FAILURE = Duration.ofSeconds(10);

  /** The shared refresh threads: two, daemons, gone when idle a minute. */
  private static final class SharedRefresh {
    static final ThreadPoolExecutor EXECUTOR;

    static {
      AtomicInteger count = new AtomicInteger();
      // At most one refresh per rules object is queued or running (see refreshing), so the
      // queue is bounded by the rules objects in use.
      EXECUTOR = new ThreadPoolExecutor(2, 2, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), task -> {
        Thread thread = new Thread(task, "robotsd-rules-refresh-" + count.incrementAndGet());
        thread.setDaemon(true);
        return thread;
      });
      EXECUTOR.allowCoreThreadTimeOut(true);
    }
  }

  /** What robotsd said of the origin: the check of the URL the rules were made for, and /v1/robots. */
  private record Origin(Answer probe, Robots robots) {}

  private final RobotsdClient client;
  private final String url;
  private final String ua;
  private final boolean failOpen;
  private final long refreshNanos;
  private final long recheckNanos;
  private final Executor executor;
  private final Map<String, Boolean> verdicts;
  private final AtomicBoolean refreshing = new AtomicBoolean();
  private volatile Origin origin;
  private volatile long refreshDue;
  private volatile long downUntil;
  private volatile boolean down;
  private volatile RobotsdException lastError;
  private volatile boolean closed;

  private RobotsRules(Builder b) {
    this.client = b.client;
    this.url = b.url;
    this.ua = b.ua;
    this.failOpen = b.failOpen;
    this.refreshNanos = b.refreshEvery.toNanos();
    this.recheckNanos = b.recheckAfterFailure.toNanos();
    this.executor = b.executor != null ? b.executor : SharedRefresh.EXECUTOR;
    int maxUrls = b.maxUrls;
    this.verdicts = new LinkedHashMap<>(16, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
        return size() > maxUrls;
      }
    };
  }

  /**
   * A builder of the rules of {@code url}'s origin for {@code ua}.
   *
   * @param client the robotsd to ask
   * @param url a URL of the origin; the rules' crawl-delay and state are those robotsd answers
   *     for it
   * @param ua the agent: a product token or a whole {@code User-Agent} header
   * @return the builder
   */
  public static Builder builder(RobotsdClient client, String url, String ua) {
    return new Builder(client, url, ua);
  }

  /** Builds {@link RobotsRules}. */
  public static final class Builder {
    private final RobotsdClient client;
    private final String url;
    private final String ua;
    private boolean failOpen;
    private Duration refreshEvery = DEFAULT_REFRESH;
    private Duration recheckAfterFailure = DEFAULT_RECHECK_AFTER_FAILURE;
    private int maxUrls = DEFAULT_MAX_URLS;
    private Executor executor;

    private Builder(RobotsdClient client, String url, String ua) {
      this.client = Objects.requireNonNull(client, "client");
      this.url = Objects.requireNonNull(url, "url");
      if (ua == null || ua.isEmpty()) {
        throw new IllegalArgumentException("ua: give a user agent");
      }
      this.ua = ua;
    }

    /**
     * What {@link #isAllowed} answers for a URL it holds no verdict for when robotsd gives none:
     * false by default (fail closed: nothing unchecked is fetched), true to fail open.
     *
     * @param failOpen whether to allow what robotsd could not answer for
     * @return this builder
     */
    public Builder failOpen(boolean failOpen) {
      this.failOpen = failOpen;
      return this;
    }

    /**
     * How long after a refresh the next one is due (5 min by default): it starts, in the
     * background, at the first use of the rules after that.
     *
     * @param refreshEvery the interval
     * @return this builder
     */
    public Builder refreshEvery(Duration refreshEvery) {
      this.refreshEvery = positive(refreshEvery, "refreshEvery");
      return this;
    }

    /**
     * How long, after robotsd gave no answer, URLs not held are answered by the failure mode
     * without asking robotsd, and when the next refresh is due (10 s by default).
     *
     * @param recheckAfterFailure the wait
     * @return this builder
     */
    public Builder recheckAfterFailure(Duration recheckAfterFailure) {
      this.recheckAfterFailure = positive(recheckAfterFailure, "recheckAfterFailure");
      return this;
    }

    /**
     * The most verdicts held ({@link #DEFAULT_MAX_URLS} by default); past it, the least recently
     * asked URL's is dropped (and asked for again if asked about again).
     *
     * @param maxUrls the bound
     * @return this builder
     */
    public Builder maxUrls(int maxUrls) {
      if (maxUrls < 1) {
        throw new IllegalArgumentException("maxUrls: " + maxUrls);
      }
      this.maxUrls = maxUrls;
      return this;
    }

    /**
     * Where the background refreshes run; by default two daemon threads shared by every rules
     * object of the JVM.
     *
     * @param executor the executor
     * @return this builder
     */
    public Builder executor(Executor executor) {
      this.executor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * The rules: asks robotsd now for the origin's file and the agent's crawl-delay (two calls).
     * When robotsd cannot answer, the rules hold nothing yet, and are asked for again after
     * {@link #recheckAfterFailure}: nothing is thrown.
     *
     * @return the rules
     */
    public RobotsRules build() {
      RobotsRules rules = new RobotsRules(this);
      rules.load();
      return rules;
    }
  }

  private static Duration positive(Duration d, String what) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(what + " must be positive: " + d);
    }
    return d;
  }

  /** Asks for the origin's file and the agent's state: the check first, which fetches it if robotsd has none. */
  private boolean load() {
    try {
      Answer probe = client.check(url, ua);
      Robots robots = client.robots(url, false);
      origin = new Origin(probe, robots);
      hold(url, probe.allowed());
      answered();
      return true;
    } catch (RobotsdException e) {
      failed(e);
      return false;
    } finally {
      refreshDue = System.nanoTime() + (down ? recheckNanos : refreshNanos);
    }
  }

  /**
   * Whether the agent may fetch {@code url}: robotsd's verdict, from memory when held, else asked
   * now (one call) and held. Never throws: when robotsd gives no verdict, a held one answers, and
   * otherwise the failure mode ({@link Builder#failOpen}: false by default).
   *
   * @param url the URL, of this origin or another (each URL's verdict is robotsd's for it)
   * @return true when allowed
   */
  public boolean isAllowed(String url) {
    refreshIfDue();
    Boolean held = held(url);
    if (held != null) {
      return held;
    }
    if (url == null || down && System.nanoTime() - downUntil < 0) {
      return failOpen;
    }
    try {
      boolean allowed = client.checkVerdict(url, ua).allowed();
      hold(url, allowed);
      answered();
      return allowed;
    } catch (RobotsdException e) {
      failed(e);
      return failOpen;
    }
  }

  /**
   * Asks robotsd now for the verdicts of {@code urls} not held yet, {@link
   * RobotsdClient#MAX_BATCH} a request ({@code POST /v1/check}), and holds them, so that {@link
   * #isAllowed} answers them from memory: for a crawler that knows the URLs it is about to
   * fetch. Never throws; at most {@link Builder#maxUrls} are held.
   *
   * @param urls the URLs
   * @return how many of them robotsd answered (a bad URL's problem, or no answer, is not one)
   */
  public int prefetch(Collection<String> urls) {
    List<String> asked = new ArrayList<>();
    for (String u : new LinkedHashSet<>(urls)) {
      if (u != null && held(u) == null) {
        asked.add(u);
      }
    }
    try {
      return ask(asked);
    } catch (RobotsdException e) {
      failed(e);
      return 0;
    }
  }

  /** Asks robotsd for {@code urls}' verdicts, a batch at a time, and holds those it answers. */
  private int ask(List<String> urls) {
    int answered = 0;
    for (int start = 0; start < urls.size(); start += RobotsdClient.MAX_BATCH) {
      List<String> chunk = urls.subList(start, Math.min(urls.size(), start + RobotsdClient.MAX_BATCH));
      List<BatchResult> results = client.checkManyVerdicts(chunk, ua);
      for (int i = 0; i < chunk.size() && i < results.size(); i++) {
        BatchResult result = results.get(i);
        if (result.answer() != null) {
          hold(chunk.get(i), result.answer().allowed());
          answered++;
        }
      }
      answered();
    }
    return answered;
  }

  private Boolean held(String url) {
    synchronized (verdicts) {
      return verdicts.get(url);
    }
  }

  private void hold(String url, boolean allowed) {
    synchronized (verdicts) {
      verdicts.put(url, allowed);
    }
  }

  private void answered() {
    down = false;
    lastError = null;
  }

  private void failed(RobotsdException e) {
    lastError = e;
    // No answer, or robotsd (or what stands before it) failing: not asked again for a while.
    // A 4xx problem is about the URL asked, not robotsd.
    if (!(e instanceof ProblemException problem) || problem.status() >= 500) {
      downUntil = System.nanoTime() + recheckNanos;
      down = true;
    }
  }

  /** Starts the background refresh when it is due and none runs. */
  private void refreshIfDue() {
    if (closed || System.nanoTime() - refreshDue < 0 || !refreshing.compareAndSet(false, true)) {
      return;
    }
    try {
      executor.execute(this::refresh);
    } catch (RejectedExecutionException e) {
      // An executor shut down: the held verdicts keep answering.
      refreshing.set(false);
    }
  }

  /** Asks robotsd again for the origin and every verdict held; keeps what it cannot answer. */
  private void refresh() {
    try {
      if (closed || !load()) {
        return;
      }
      List<String> urls;
      synchronized (verdicts) {
        urls = new ArrayList<>(verdicts.keySet());
      }
      try {
        ask(urls);
      } catch (RobotsdException e) {
        failed(e);
        refreshDue = System.nanoTime() + recheckNanos;
      }
    } finally {
      refreshing.set(false);
    }
  }

  /**
   * The agent's crawl-delay in milliseconds, or {@link #UNSET_CRAWL_DELAY} ({@link
   * Long#MIN_VALUE}, as crawler-commons has it) when robots.txt states none or the rules hold
   * nothing: test it before waiting on it, or use {@link #crawlDelay}.
   *
   * @return the crawl-delay, or {@link #UNSET_CRAWL_DELAY}
   */
  public long getCrawlDelay() {
    return crawlDelay().map(Duration::toMillis).orElse(UNSET_CRAWL_DELAY);
  }

  /**
   * The agent's crawl-delay, if robots.txt states one: the safe form of {@link #getCrawlDelay}.
   *
   * @return the crawl-delay, or empty when robots.txt states none or the rules hold nothing
   */
  public Optional<Duration> crawlDelay() {
    refreshIfDue();
    Origin held = origin;
    Double seconds = held == null ? null : held.probe().crawlDelay();
    if (seconds == null || seconds.isNaN() || seconds < 0) {
      return Optional.empty();
    }
    return Optional.of(Duration.ofMillis(Math.round(seconds * 1000)));
  }

  /**
   * The sitemaps robots.txt lists, in its order.
   *
   * @return their URLs; empty when the rules hold nothing
   */
  public List<String> getSitemaps() {
    refreshIfDue();
    Origin held = origin;
    if (held == null || held.robots().parsed() == null || held.robots().parsed().sitemaps() == null) {
      return List.of();
    }
    return held.robots().parsed().sitemaps().stream().map(Sitemap::url).toList();
  }

  /**
   * Whether everything is allowed because robotsd answers as if the origin had no robots.txt: a
   * 4xx, a broken redirect chain, or a file unreachable for 30 days or never fetched in 12 hours
   * of trying (the reasons {@code no_robots_txt}, {@code redirect_limit}, {@code
   * unreachable_30_days} and {@code unreachable_no_copy}).
   *
   * @return true when every URL of the origin is allowed; false when the rules hold nothing
   */
  public boolean isAllowAll() {
    String reason = reason();
    return "no_robots_txt".equals(reason)
        || "redirect_limit".equals(reason)
        || "unreachable_30_days".equals(reason)
        || "unreachable_no_copy".equals(reason);
  }

  /**
   * Whether nothing is allowed because robots.txt is unreachable (a 5xx or no answer) and
   * robotsd has no copy to answer from (the reason {@code unreachable_disallow_all}).
   *
   * @return true when robotsd disallows the whole origin for now
   */
  public boolean isAllowNone() {
    return "unreachable_disallow_all".equals(reason());
  }

  /**
   * Whether visits should wait, as crawler-commons says of a robots.txt answered with a 5xx:
   * while robotsd disallows the whole origin until it can fetch the file ({@link #isAllowNone}),
   * and, failing closed, while the rules hold nothing because robotsd could not be asked.
   *
   * @return true when the crawler should come back later
   */
  public boolean isDeferVisits() {
    return isAllowNone() || origin == null && !failOpen;
  }

  private String reason() {
    refreshIfDue();
    Origin held = origin;
    return held == null ? null : held.probe().reason();
  }

  /**
   * What robotsd holds for the origin, as last read: its state, parsed file and pacing state.
   *
   * @return what robotsd answered, or null when the rules hold nothing (robotsd could not be
   *     asked yet)
   */
  public Robots robots() {
    Origin held = origin;
    return held == null ? null : held.robots();
  }

  /**
   * Why robotsd gave no verdict the last time it was asked, if it did not.
   *
   * @return the last failure, until robotsd answers again
   */
  public Optional<RobotsdException> lastError() {
    return Optional.ofNullable(lastError);
  }

  /**
   * Stops the background refreshes: the verdicts held keep answering, and URLs not held are
   * still asked for. Not needed for an object dropped: one no longer used is never refreshed.
   */
  @Override
  public void close() {
    closed = true;
  }
}
