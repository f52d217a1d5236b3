package io.github.robotsd.client;

import io.github.robotsd.client.model.Answer;
import io.github.robotsd.client.model.Pace;
import io.github.robotsd.client.model.Report;
import io.github.robotsd.client.model.Sign;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * Fetches through a {@link HttpClient} asking robotsd before every request: a request robots.txt
 * disallows fails with a {@link DisallowedException} carrying the reason and the rule's line,
 * and the others are <b>paced for the whole fleet</b>. Safe for concurrent use.
 *
 * <p>Pacing is on by default: right before each request the fetcher reserves a fetch slot with
 * the check ({@link RobotsdClient#checkPaced}), so that every worker asking robotsd keeps each
 * site's crawl-delay together (robotsd's {@code --default-crawl-delay}, 1 s, where robots.txt
 * states none), and waits for it. A slot further ahead than robotsd's {@code --max-pace-wait} is
 * deferred: the fetcher waits, with a jitter, and asks again, for at most {@code maxPaceWait} in
 * all, then fails with a {@link DeferredException}. A fetcher that wakes up more than {@link
 * #slotLateness} after its slot gives it up and asks for another, as a late fetch would shorten
 * the gap to the next slot at the site. After the response it reports to robotsd, in the
 * background and batched, a 429 or 503 (with its {@code Retry-After}, which also holds this
 * fetcher's own requests to the origin back), any other 5xx, a timeout, a connection refused or
 * reset, and every other answer with the time the site took to answer; its next request to that
 * origin reserves once a pushback has been reported. A report that fails never fails a request.
 *
 * <p>{@link Builder#noPacing} turns that off (for a robotsd older than pacing, or a crawler that
 * paces itself): the fetcher checks without reserving, reports nothing, and keeps each answer's
 * crawl-delay and {@link #LOCAL_PACE_GUARD} between its own requests to an origin.
 *
 * <p>{@link Builder#sign} (off by default) has robotsd sign each request for Web Bot Auth: every
 * check asks {@code sign=} the request's method, and the request goes out to the URL robotsd
 * signed with the three headers of {@link Answer#sign()}, in place of any of the same name. A
 * checked request is never sent unsigned: a method other than GET or HEAD is refused before
 * robotsd is asked, an allowed answer without a signature fails, and robotsd's signing problems
 * ({@link ProblemException#SIGNING_OFF}, {@link ProblemException#SIGN_OTHER_AGENT}) fail even
 * with {@link Builder#failOpen}. Redirects are the caller's, as ever: each hop is a request of
 * its own, checked and signed in its turn.
 */
public final class RobotsdFetcher {

  /** The agent checked as when neither the fetcher nor the request names one. */
  public static final String DEFAULT_AGENT = "Java-http-client";

  /** How long a request waits in all for slots robotsd defers, by default. */
  public static final Duration DEFAULT_MAX_PACE_WAIT = Duration.ofMinutes(10);

  /**
   * What is added to a crawl-delay the fetcher keeps itself (no pacing), as robotsd adds its
   * {@code --pace-guard} between the slots it hands out: a request that starts or reaches the
   * site a little late followed by one on time still leaves the site the whole crawl-delay.
   */
  public static final Duration LOCAL_PACE_GUARD = Duration.ofMillis(50);

  /** The most a paced request may start late for its slot, whatever the interval. */
  public static final Duration SLOT_LATENESS = Duration.ofMillis(25);

  private static final Duration MIN_SLOT_LATENESS = Duration.ofMillis(5);
  private static final Duration MIN_DEFERRED_WAIT = Duration.ofMillis(10);
  private static final int MAX_RETRY_AFTER_BYTES = 256;
  private static final long MAX_RESPONSE_MS = 600_000;

  private final RobotsdClient client;
  private final HttpClient http;
  private final String userAgent;
  private final boolean failOpen;
  private final boolean noPacing;
  private final boolean sign;
  private final Duration maxPaceWait;
  private final BiConsumer<HttpRequest, Answer> onAnswer;
  private final LocalPacer local = new LocalPacer();
  private final Reporter reports;
  private final AtomicLong lateSlots = new AtomicLong();
  private final AtomicBoolean warmed = new AtomicBoolean();

  private RobotsdFetcher(Builder b) {
    this.client = b.client;
    this.http = b.http != null ? b.http : HttpClient.newBuilder()
        .followRedirects(HttpClient.Redirect.NEVER)
        .connectTimeout(Duration.ofSeconds(10))
        .build();
    this.userAgent = b.userAgent;
    this.failOpen = b.failOpen;
    this.noPacing = b.noPacing;
    this.sign = b.sign;
    this.maxPaceWait = b.maxPaceWait;
    this.onAnswer = b.onAnswer;
    this.reports = new Reporter(b.client);
    if (sign && http.followRedirects() != HttpClient.Redirect.NEVER) {
      // Such a client sends the next hop itself, unchecked and with this hop's signature, which
      // covers this hop's authority, path and query alone.
      throw new IllegalStateException("RobotsdFetcher: sign(true) needs an HttpClient that follows no"
          + " redirect (HttpClient.Redirect.NEVER): each hop is a request of its own, checked and signed");
    }
  }

  /**
   * A builder of a fetcher asking {@code client}.
   *
   * @param client the robotsd to ask
   * @return the builder
   */
  public static Builder builder(RobotsdClient client) {
    return new Builder(client);
  }

  /** Builds a {@link RobotsdFetcher}. */
  public static final class Builder {
    private final RobotsdClient client;
    private HttpClient http;
    private String userAgent;
    private boolean failOpen;
    private boolean noPacing;
    private boolean sign;
    private Duration maxPaceWait = DEFAULT_MAX_PACE_WAIT;
    private BiConsumer<HttpRequest, Answer> onAnswer;

    private Builder(RobotsdClient client) {
      this.client = Objects.requireNonNull(client, "client");
    }

    /**
     * What makes the allowed requests; by default a client of its own that follows no redirect
     * (a redirect's target is another request, to be checked in its turn).
     *
     * @param http the HTTP client
     * @return this builder
     */
    public Builder httpClient(HttpClient http) {
      this.http = http;
      return this;
    }

    /**
     * The agent to check as; by default each request's {@code User-Agent} header (a whole header
     * is fine: robotsd takes its product token).
     *
     * @param userAgent the agent
     * @return this builder
     */
    public Builder userAgent(String userAgent) {
      this.userAgent = userAgent;
      return this;
    }

    /**
     * Lets requests through when robotsd cannot answer. By default they fail (fail closed): a
     * crawler never fetches what it could not check.
     *
     * @param failOpen whether to fetch unchecked when robotsd cannot answer
     * @return this builder
     */
    public Builder failOpen(boolean failOpen) {
      this.failOpen = failOpen;
      return this;
    }

    /**
     * Turns fleet pacing off: no slots, no reports; the fetcher keeps each answer's crawl-delay
     * (capped at 60 s) and {@link #LOCAL_PACE_GUARD} for its own requests.
     *
     * @param noPacing true to turn pacing off
     * @return this builder
     */
    public Builder noPacing(boolean noPacing) {
      this.noPacing = noPacing;
      return this;
    }

    /**
     * Has robotsd sign each request for Web Bot Auth (off by default): every check asks {@code
     * sign=} the request's method, and the request goes out to the URL robotsd signed ({@link
     * Sign#url()}, which may be written otherwise than the request's) with the three headers of
     * {@link Answer#sign()}, replacing any of the same name. A checked request is never sent
     * unsigned: a method other than GET or HEAD fails with a {@link RobotsdException} before
     * robotsd is asked, as does an allowed answer without a signature; robotsd's {@link
     * ProblemException#SIGNING_OFF} and {@link ProblemException#SIGN_OTHER_AGENT} fail even with
     * {@link #failOpen} (which still fetches unchecked, so unsigned, when robotsd cannot answer
     * at all). A request for {@code /robots.txt} goes through unasked, so unsigned, as ever:
     * robots.txt is always allowed, and robotsd signs only what it allows. The HTTP client must
     * follow no redirect ({@link #build} refuses one that does): each hop is sent through the
     * fetcher, checked and signed for itself.
     *
     * @param sign true to sign every request
     * @return this builder
     */
    public Builder sign(boolean sign) {
      this.sign = sign;
      return this;
    }

    /**
     * How long a request waits in all for slots robotsd defers before failing with a {@link
     * DeferredException} (10 minutes by default). A reserved slot is always waited for.
     *
     * @param maxPaceWait the longest wait
     * @return this builder
     */
    public Builder maxPaceWait(Duration maxPaceWait) {
      this.maxPaceWait = Objects.requireNonNull(maxPaceWait, "maxPaceWait");
      return this;
    }

    /**
     * Sees every answer before its request goes out, a deferred slot's too.
     *
     * @param onAnswer the callback
     * @return this builder
     */
    public Builder onAnswer(BiConsumer<HttpRequest, Answer> onAnswer) {
      this.onAnswer = onAnswer;
      return this;
    }

    /**
     * The fetcher.
     *
     * @return a new fetcher
     * @throws IllegalStateException signing with an HTTP client that follows redirects
     */
    public RobotsdFetcher build() {
      return new RobotsdFetcher(this);
    }
  }

  /**
   * Sends {@code request} once robotsd allows it and its slot has come, as {@link
   * HttpClient#send} does. A request for {@code /robots.txt} itself goes through unasked.
   *
   * @param request the request
   * @param handler what to do with the response body
   * @param <T> the body's type
   * @return the response
   * @throws DisallowedException robots.txt disallows the URL: nothing was fetched
   * @throws DeferredException no slot within {@code maxPaceWait}: requeue the URL
   * @throws RobotsdException robotsd could not answer (unless {@code failOpen}); signing, also
   *     a method other than GET or HEAD, robotsd's signing problem (even with {@code failOpen})
   *     or an allowed answer without a signature: nothing was sent
   * @throws IOException the fetch itself failed
   * @throws InterruptedException the thread was interrupted while waiting or fetching
   */
  public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
      throws IOException, InterruptedException {
    URI uri = request.uri();
    if (sign && !request.method().equals("GET") && !request.method().equals("HEAD")) {
      // robotsd signs these two alone, and a signing fetcher sends nothing unsigned.
      throw new RobotsdException("robotsd: " + request.method() + " " + uri
          + " not sent: robotsd signs GET and HEAD requests only");
    }
    // robots.txt itself is always allowed (RFC 9309 §2.5), and robotsd fetches it anyway. It
    // goes unsigned: robotsd signs only what robots.txt allows, which may not be robots.txt.
    if ("/robots.txt".equals(uri.getRawPath())) {
      return http.send(request, handler);
    }
    String ua = userAgent;
    if (ua == null || ua.isEmpty()) {
      ua = request.headers().firstValue("User-Agent").orElse(DEFAULT_AGENT);
    }
    String target = uri.toString();
    String origin = origin(uri);
    // One retry budget for every check this request makes (the warm-up, each reservation, a
    // signature asked again): robotsd overloaded sees at most 1 + maxRetries of them refused.
    RobotsdClient.Retries retries = client.retries();
    Answer answer;
    if (noPacing) {
      answer = askUnpaced(request, target, ua, retries);
      if (answer != null) {
        answer = keepDelay(request, target, origin, ua, answer, retries);
      }
    } else {
      answer = reserve(request, target, origin, ua, retries);
    }
    boolean report = answer != null && answer.pace() != null;
    if (sign && answer != null) {
      request = signed(request, answer.sign());
    }
    long sent = System.nanoTime();
    long[] headersAt = {0};
    HttpResponse.BodyHandler<T> timed = info -> {
      headersAt[0] = System.nanoTime();
      return handler.apply(info);
    };
    HttpResponse<T> response;
    try {
      response = http.send(request, timed);
    } catch (IOException e) {
      if (report) {
        reportFailure(target, origin, e);
      }
      throw e;
    }
    if (report) {
      reportResponse(target, origin, response, headersAt[0] == 0 ? System.nanoTime() - sent : headersAt[0] - sent);
    }
    return response;
  }

  /**
   * How many slots this fetcher gave up because it woke up too late for them.
   *
   * @return the count
   */
  public long lateSlots() {
    return lateSlots.get();
  }

  /**
   * Waits until the reports queued so far have reached robotsd (or failed to), at most 10 s:
   * before a crawler exits, so that the fleet hears of its last answers.
   *
   * @throws InterruptedException the thread was interrupted
   */
  public void flushReports() throws InterruptedException {
    reports.flush();
  }

  /**
   * Checks without pacing (signed when signing): the answer of an allowed request, null when
   * robotsd could not answer and the fetcher fails open.
   */
  private Answer askUnpaced(HttpRequest request, String target, String ua, RobotsdClient.Retries retries) {
    Answer answer;
    try {
      answer = client.checkWithin(retries, false, target, ua, signQuery(request), null);
    } catch (RobotsdException e) {
      if (failsOpen(e)) {
        return null;
      }
      throw e;
    }
    seen(request, answer);
    if (!answer.allowed()) {
      throw new DisallowedException(target, answer);
    }
    requireSign(target, answer);
    return answer;
  }

  /**
   * Waits out the answer's crawl-delay since the origin's last start; signing, asks again for a
   * signature the wait left too little of.
   */
  private Answer keepDelay(HttpRequest request, String target, String origin, String ua, Answer answer,
      RobotsdClient.Retries retries) throws InterruptedException {
    long answeredAt = System.nanoTime();
    local.await(origin, crawlDelay(answer));
    if (sign && outlived(answer.sign(), System.nanoTime() - answeredAt)) {
      // A crawl-delay (up to 60 s) or a Retry-After (up to 10 min) can outlast a signature
      // (60 s by default); the request's start is taken, so this asks without waiting again.
      return askUnpaced(request, target, ua, retries);
    }
    return answer;
  }

  /**
   * Whether a wait of {@code waitedNanos} took more than half of the signature's life: the
   * request, its connection and the clocks' difference would have less than the other half.
   */
  static boolean outlived(Sign signature, long waitedNanos) {
    Duration life;
    try {
      life = Duration.between(Instant.parse(signature.created()), Instant.parse(signature.expires()));
    } catch (RuntimeException e) {
      // Its life unknown: a fresh one is asked for, once.
      return true;
    }
    return waitedNanos > life.toNanos() / 2;
  }

  /** Whether the fetcher fetches unchecked after {@code e}: never for robotsd's signing problems. */
  private boolean failsOpen(RobotsdException e) {
    if (e instanceof ProblemException problem
        && (ProblemException.SIGNING_OFF.equals(problem.type())
            || ProblemException.SIGN_OTHER_AGENT.equals(problem.type()))) {
      // A configuration error, not robotsd unavailable: fetching would send the request unsigned.
      return false;
    }
    return failOpen;
  }

  /** Signing, an allowed request must have its signature: it is never sent unsigned. */
  private void requireSign(String target, Answer answer) {
    Sign signature = answer.sign();
    if (sign && (signature == null || signature.url() == null || signature.headers() == null)) {
      throw new RobotsdException("robotsd: " + target + " is allowed but the answer has no signature"
          + " (a robotsd older than Web Bot Auth?): not sent unsigned");
    }
  }

  /**
   * The request as robotsd signed it: to {@code signature.url()}, the URL as robotsd parsed it
   * (the path and query the signature covers, which the request's own URI may write otherwise),
   * with the three headers in place of any of the same name the caller set.
   */
  private static HttpRequest signed(HttpRequest request, Sign signature) {
    if (!request.method().equals(signature.method())) {
      throw new RobotsdException("robotsd: signed " + signature.method() + " for a " + request.method()
          + " request: not sent");
    }
    URI to;
    try {
      to = new URI(signature.url());
    } catch (URISyntaxException e) {
      throw new RobotsdException("robotsd: cannot send " + signature.url() + " as robotsd signed it: "
          + e.getMessage(), e);
    }
    HttpRequest.Builder out = HttpRequest.newBuilder(request, (name, value) -> true).uri(to);
    // setHeader replaces a header of the same name the caller set.
    signature.headers().asMap().forEach(out::setHeader);
    return out.build();
  }

  /** Reserves the request's slot and waits for it, asking again while robotsd defers it. */
  private Answer reserve(HttpRequest request, String target, String origin, String ua,
      RobotsdClient.Retries retries) throws InterruptedException {
    // A pushback this fetcher saw from the origin is reported before the next slot is taken.
    reports.settled(origin);
    long giveUp = System.nanoTime() + maxPaceWait.toNanos();
    for (;;) {
      Answer answer;
      long[] answeredAt = {0};
      try {
        warmUp(request, target, ua, retries);
        answer = client.checkWithin(retries, false, target, ua, "&pace=true" + signQuery(request), answeredAt);
      } catch (RobotsdException e) {
        if (failsOpen(e)) {
          return null;
        }
        throw e;
      }
      seen(request, answer);
      if (!answer.allowed()) {
        throw new DisallowedException(target, answer);
      }
      Pace pace = answer.pace();
      if (pace == null) {
        // An allowed URL always has a slot; should a robotsd not give one, keep the delay here.
        requireSign(target, answer);
        return keepDelay(request, target, origin, ua, answer, retries);
      }
      Duration wait = pace.waitDuration();
      if (pace.reserved()) {
        // Its signature lasts from the slot; one woken too late asks again, and is signed anew.
        requireSign(target, answer);
        // Counted from when robotsd's answer arrived, not from when it was read.
        long at = answeredAt[0] + wait.toNanos();
        wait = Duration.ofNanos(Math.max(0, at - System.nanoTime()));
        // A Retry-After this fetcher was answered holds its requests back even if robotsd did
        // not hear of it: past the slot, which is then given up unless within the lateness.
        Duration held = local.heldFor(origin);
        if (held.compareTo(wait) > 0) {
          wait = held;
        }
        if (System.nanoTime() + wait.toNanos() - giveUp > 0) {
          throw new DeferredException(target, answer);
        }
        Sleeper.sleep(wait);
        if (System.nanoTime() - at <= slotLateness(Duration.ofMillis(pace.intervalMs())).toNanos()) {
          return answer;
        }
        // Woken late: the next slot, perhaps another worker's, is one interval after this one.
        lateSlots.incrementAndGet();
        continue;
      }
      if (wait.compareTo(MIN_DEFERRED_WAIT) < 0) {
        wait = MIN_DEFERRED_WAIT;
      }
      wait = RobotsdClient.askAgainDelay(wait, client.random());
      if (System.nanoTime() + wait.toNanos() - giveUp > 0) {
        throw new DeferredException(target, answer);
      }
      Sleeper.sleep(wait);
    }
  }

  /**
   * Once per fetcher, an unpaced check before the first reservation: a JVM's first calls load
   * and compile the HTTP and JSON code, which took most of a second on a busy 2-core machine,
   * after the slot was handed out. This one reserves nothing. Signing, it asks a signature too,
   * as every check does: a robotsd that cannot sign then fetches nothing for it. It is the
   * request's first check, within its one retry budget: a 503 of robotsd's is waited out here
   * and the paced check that follows is its retry, so that the first request is not retried
   * twice over; any other failure is the request's, as the paced check would fail alike.
   */
  private void warmUp(HttpRequest request, String target, String ua, RobotsdClient.Retries retries) {
    if (warmed.compareAndSet(false, true)) {
      client.checkWithin(retries, true, target, ua, sign ? signQuery(request) : "&view=verdict", null);
    }
  }

  /** Signing, the query parameter asking a signature for the request's method; else nothing. */
  private String signQuery(HttpRequest request) {
    return sign ? RobotsdClient.signQuery(request.method()) : "";
  }

  private void seen(HttpRequest request, Answer answer) {
    if (onAnswer != null) {
      onAnswer.accept(request, answer);
    }
  }

  /**
   * How late a request may start after a slot of {@code interval}: a twentieth of it, at least
   * 5 ms (timers fire a little late as a matter of course) and at most {@link #SLOT_LATENESS}.
   * With this bound the site sees at least 95% of an interval of 100 ms or more.
   *
   * @param interval the slot's interval
   * @return the lateness allowed
   */
  public static Duration slotLateness(Duration interval) {
    Duration late = interval.dividedBy(20);
    if (late.compareTo(MIN_SLOT_LATENESS) < 0) {
      return MIN_SLOT_LATENESS;
    }
    return late.compareTo(SLOT_LATENESS) > 0 ? SLOT_LATENESS : late;
  }

  private void reportResponse(String target, String origin, HttpResponse<?> response, long ranNanos) {
    int status = response.statusCode();
    if (status == 429 || status == 503) {
      String retryAfter = response.headers().firstValue("Retry-After").map(String::strip).orElse(null);
      local.hold(origin, retryAfter);
      if (retryAfter != null && (retryAfter.isEmpty() || retryAfter.length() > MAX_RETRY_AFTER_BYTES)) {
        // robotsd refuses the whole report for it; without it, it is still a pushback.
        retryAfter = null;
      }
      reports.add(origin, Report.ofStatus(target, status, retryAfter), true);
    } else if (status >= 500 && status <= 599) {
      reports.add(origin, Report.ofStatus(target, status), true);
    } else if (status >= 100 && status <= 599) {
      reports.add(origin, Report.ofStatus(target, status).withResponseMs(responseMs(ranNanos)), false);
    }
  }

  /**
   * Reports a fetch that got no answer: a timeout (the request's own, which starts once it is
   * sent, after the wait for the slot), a connection refused, or one reset or closed before any
   * answer. Other failures (a name that does not resolve, TLS) say nothing of the site's load.
   */
  private void reportFailure(String target, String origin, IOException e) {
    if (e instanceof HttpTimeoutException) {
      reports.add(origin, Report.ofTimeout(target), true);
    } else if (e instanceof ConnectException) {
      reports.add(origin, Report.ofConnection(target, Report.CONNECTION_REFUSED), true);
    } else if (isReset(e)) {
      reports.add(origin, Report.ofConnection(target, Report.CONNECTION_RESET), true);
    }
  }

  private static boolean isReset(IOException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      String message = String.valueOf(t.getMessage()).toLowerCase(Locale.ROOT);
      // The JDK's words for a connection reset, or closed before the response's headers.
      if (message.contains("connection reset") || message.contains("received no bytes")
          || message.contains("eof reached") || message.contains("connection closed")) {
        return true;
      }
    }
    return false;
  }

  /** Whole milliseconds, rounded up so that a fast answer is still a sample, within robotsd's bound. */
  static long responseMs(long nanos) {
    long ms = (nanos + 999_999) / 1_000_000;
    return Math.max(1, Math.min(MAX_RESPONSE_MS, ms));
  }

  /** An answer's crawl-delay as a duration; zero when there is none. */
  static Duration crawlDelay(Answer answer) {
    Double seconds = answer.crawlDelay();
    if (seconds == null || seconds <= 0) {
      return Duration.ZERO;
    }
    return Duration.ofNanos((long) (Math.min(seconds, LocalPacer.MAX_LOCAL_DELAY.toSeconds()) * 1e9));
  }

  /** The request's origin, scheme, host and port, as robotsd keys pacing. */
  static String origin(URI uri) {
    String scheme = String.valueOf(uri.getScheme()).toLowerCase(Locale.ROOT);
    String host = String.valueOf(uri.getHost()).toLowerCase(Locale.ROOT);
    int port = uri.getPort();
    if (port < 0) {
      port = scheme.equals("https") ? 443 : 80;
    }
    return scheme + "://" + host + ":" + port;
  }
}
