package io.github.robotsd.client;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.robotsd.client.model.Answer;
import io.github.robotsd.client.model.FeedbackResult;
import io.github.robotsd.client.model.PaceState;
import io.github.robotsd.client.model.PageAnswer;
import io.github.robotsd.client.model.PageRequest;
import io.github.robotsd.client.model.Problem;
import io.github.robotsd.client.model.Report;
import io.github.robotsd.client.model.Robots;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.DoubleSupplier;

/**
 * A client of one robotsd, robots.txt as a service: may this user agent fetch this URL, and why.
 * It needs the JDK's {@code java.net.http} and Jackson only, and is safe for concurrent use:
 * one instance keeps one pool of connections to robotsd.
 *
 * <p>Every call has a deadline ({@link Builder#timeout}, 30 s by default, robotsd's own request
 * limit; {@link #withTimeout} gives a copy with another) that bounds it whole, retries included.
 * A 503 from robotsd itself (overloaded, a connection or body limit, {@code cache-full}: robotsd
 * did nothing with the request) is retried up to {@link Builder#maxRetries} times after its
 * {@code Retry-After} and a jitter, within the deadline: one that is {@code
 * application/problem+json} with a {@code urn:robotsd:problem:} type. Any other 503 (a proxy's
 * or load balancer's page) is not retried: nothing says the request was not acted on. Any error
 * answer left is a {@link ProblemException} carrying the problem's type, title, status and
 * detail and the request id; no answer at all is an {@link UnavailableException}. Each method
 * that asks robotsd (all but the builders, {@link #withTimeout}, {@link #withRequestId}, the
 * accessors and {@link #askAgainDelay}) goes over the network, each of its requests with one
 * retry budget, and throws when robotsd gives no verdict; {@link #rules} alone never throws.
 */
public final class RobotsdClient {

  /** The most items robotsd answers in one batch; longer lists are sent in chunks this long. */
  public static final int MAX_BATCH = 1000;

  /** How long a call may take by default: robotsd answers within its own 30 s request limit. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

  /** How many times a call answered 503 by robotsd is sent again, by default. */
  public static final int DEFAULT_MAX_RETRIES = 2;

  /** The most jitter {@link #askAgainDelay} adds to a wait. */
  public static final Duration MAX_JITTER = Duration.ofSeconds(1);

  /** The longest {@code Retry-After} of robotsd's own a retry waits. */
  static final Duration MAX_RETRY_WAIT = Duration.ofSeconds(60);

  /** The prefix of the type of every problem robotsd itself answers with. */
  static final String PROBLEM_PREFIX = "urn:robotsd:problem:";

  /**
   * The JSON mapping of robotsd's documents: the records name their snake-case properties
   * (Jackson 2.14's naming strategies do not work with records), unknown ones are ignored.
   */
  static final ObjectMapper JSON = new ObjectMapper()
      .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
      .setSerializationInclusion(JsonInclude.Include.NON_NULL);

  static {
    // Jackson reads a record's shape on its first use: that costs a cold JVM hundreds of
    // milliseconds on a busy machine, which a paced check's answer must not spend.
    JSON.convertValue(JSON.createObjectNode().put("allowed", true).putObject("pace").put("wait_ms", 0), Answer.class);
  }

  private final String baseUrl;
  private final HttpClient http;
  private final String token;
  private final Duration timeout;
  private final int maxRetries;
  private final String requestId;
  private final DoubleSupplier random;

  private RobotsdClient(
      String baseUrl, HttpClient http, String token, Duration timeout, int maxRetries,
      String requestId, DoubleSupplier random) {
    this.baseUrl = baseUrl;
    this.http = http;
    this.token = token;
    this.timeout = timeout;
    this.maxRetries = maxRetries;
    this.requestId = requestId;
    this.random = random;
  }

  /**
   * A client of the robotsd at {@code baseUrl} with the defaults.
   *
   * @param baseUrl robotsd's address, such as {@code http://127.0.0.1:8080}
   * @return the client
   */
  public static RobotsdClient create(String baseUrl) {
    return builder(baseUrl).build();
  }

  /**
   * A builder of a client of the robotsd at {@code baseUrl}.
   *
   * @param baseUrl robotsd's address, such as {@code http://127.0.0.1:8080}
   * @return the builder
   */
  public static Builder builder(String baseUrl) {
    return new Builder(baseUrl);
  }

  /** Builds a {@link RobotsdClient}. */
  public static final class Builder {
    private final String baseUrl;
    private HttpClient http;
    private String token;
    private Duration timeout = DEFAULT_TIMEOUT;
    private int maxRetries = DEFAULT_MAX_RETRIES;
    private DoubleSupplier random = () -> ThreadLocalRandom.current().nextDouble();

    private Builder(String baseUrl) {
      this.baseUrl = Objects.requireNonNull(baseUrl, "baseUrl").replaceAll("/+$", "");
    }

    /**
     * The bearer token robotsd asks for when it runs with {@code --api-token-file}.
     *
     * @param token the token
     * @return this builder
     */
    public Builder token(String token) {
      this.token = token;
      return this;
    }

    /**
     * How long each call may take in all, retries included (30 s by default).
     *
     * @param timeout the deadline of each call
     * @return this builder
     */
    public Builder timeout(Duration timeout) {
      this.timeout = positive(timeout);
      return this;
    }

    /**
     * How many times a call robotsd answered 503 is sent again (2 by default; 0: never).
     *
     * @param maxRetries the most retries of one call
     * @return this builder
     */
    public Builder maxRetries(int maxRetries) {
      if (maxRetries < 0) {
        throw new IllegalArgumentException("maxRetries: " + maxRetries);
      }
      this.maxRetries = maxRetries;
      return this;
    }

    /**
     * The {@link HttpClient} to reach robotsd with (a proxy, custom TLS); by default one of its
     * own, with no proxy (a sidecar robotsd is never reached through one) and a 5 s connect
     * timeout, so that a dead host shows at once rather than at the deadline.
     *
     * @param http the HTTP client
     * @return this builder
     */
    public Builder httpClient(HttpClient http) {
      this.http = http;
      return this;
    }

    /** For tests: the random numbers in [0, 1) the jitter is drawn from. */
    Builder random(DoubleSupplier random) {
      this.random = random;
      return this;
    }

    /**
     * The client.
     *
     * @return a new client
     */
    public RobotsdClient build() {
      HttpClient client = http != null ? http : HttpClient.newBuilder()
          .connectTimeout(Duration.ofSeconds(5))
          .proxy(HttpClient.Builder.NO_PROXY)
          .build();
      return new RobotsdClient(baseUrl, client, token, timeout, maxRetries, null, random);
    }
  }

  private static Duration positive(Duration d) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException("a deadline must be positive: " + d);
    }
    return d;
  }

  /**
   * This client with another deadline for each call: the same connections, settings and
   * request id.
   *
   * @param timeout how long each call of the copy may take in all
   * @return the copy
   */
  public RobotsdClient withTimeout(Duration timeout) {
    return new RobotsdClient(baseUrl, http, token, positive(timeout), maxRetries, requestId, random);
  }

  /**
   * This client sending {@code X-Request-Id: requestId} with each call, so that robotsd logs the
   * calls under the caller's id (printable ASCII, at most 128 characters) and answers with it.
   *
   * @param requestId the id; null: robotsd makes one
   * @return the copy
   */
  public RobotsdClient withRequestId(String requestId) {
    return new RobotsdClient(baseUrl, http, token, timeout, maxRetries, requestId, random);
  }

  /**
   * robotsd's address.
   *
   * @return the base URL, without a trailing slash
   */
  public String baseUrl() {
    return baseUrl;
  }

  /**
   * Each call's deadline.
   *
   * @return the timeout
   */
  public Duration timeout() {
    return timeout;
  }

  /**
   * May the agent(s) fetch {@code url}? ({@code GET /v1/check})
   *
   * @param url the URL
   * @param ua the agent: a product token or a whole {@code User-Agent} header, or several names
   *     of one crawler
   * @return the answer in full
   */
  public Answer check(String url, String... ua) {
    return checkWith(url, ua, "");
  }

  /**
   * {@link #check}, and when the agent may fetch the URL, a fetch slot reserved for it that
   * keeps the origin's interval for the whole fleet ({@code pace=true}): {@link Answer#pace()}.
   * One reservation is one fetch: reserve right before fetching, then wait {@code
   * pace().waitDuration()} (reserved) or ask again after it (deferred). {@link RobotsdFetcher}
   * does this for every request.
   *
   * @param url the URL
   * @param ua the agent(s)
   * @return the answer, with its pace when allowed
   */
  public Answer checkPaced(String url, String... ua) {
    return checkWith(url, ua, "&pace=true");
  }

  /**
   * {@link #check} whose answer also carries {@link Answer#record()} ({@code record=true}): what
   * robots.txt said of the URL, compact, to store beside the fetched page.
   *
   * @param url the URL
   * @param ua the agent(s)
   * @return the answer with its record
   */
  public Answer checkRecorded(String url, String... ua) {
    return checkWith(url, ua, "&record=true");
  }

  /**
   * The verdict alone ({@code view=verdict}): {@code allowed} and {@code reason}, for a fleet
   * that checks every URL and needs nothing else. {@link Answer#full()} is false.
   *
   * @param url the URL
   * @param ua the agent(s)
   * @return the verdict
   */
  public Answer checkVerdict(String url, String... ua) {
    return checkWith(url, ua, "&view=verdict");
  }

  /**
   * {@link #check}, and when the agent may fetch the URL, robotsd's Web Bot Auth signature for
   * exactly that request ({@code sign=GET} or {@code HEAD}): {@link Answer#sign()}. Send {@code
   * sign().method()} to {@code sign().url()} with {@code sign().headers()}, before {@code
   * sign().expires()}. A disallowed URL gets the verdict and no signature. A robotsd without
   * keys answers the problem {@code urn:robotsd:problem:signing-off}; one with {@code
   * --wba-product-token} answers {@code urn:robotsd:problem:sign-other-agent} to an agent that
   * does not name the token ({@link ProblemException}).
   *
   * @param method {@code GET} or {@code HEAD}: robotsd signs no other method
   * @param url the URL
   * @param ua the agent(s)
   * @return the answer, with its signature when allowed
   */
  public Answer checkSigned(String method, String url, String... ua) {
    return checkWith(url, ua, signParameter(method));
  }

  /**
   * {@link #checkPaced} and {@link #checkSigned} at once: a reserved slot's answer carries the
   * signature, which holds from the slot's {@code not_before}; a deferred slot's carries none
   * (ask again after its wait).
   *
   * @param method {@code GET} or {@code HEAD}
   * @param url the URL
   * @param ua the agent(s)
   * @return the answer, with its pace and, for a reserved slot, its signature
   */
  public Answer checkPacedSigned(String method, String url, String... ua) {
    return checkWith(url, ua, "&pace=true" + signParameter(method));
  }

  /**
   * A redirect's next hop, checked and signed ({@code POST /v1/sign}): answered as {@link
   * #checkSigned} (or, with {@code pace}, {@link #checkPacedSigned}) answers, the URL sent in a
   * JSON body rather than a query. Each hop needs a signature of its own: the first one covers
   * the first hop's authority, path and query.
   *
   * @param method {@code GET} or {@code HEAD}
   * @param url the URL about to be fetched
   * @param pace also reserve the URL's fetch slot (its origin may not be the first hop's)
   * @param ua the agent(s)
   * @return the answer, with its signature when allowed
   */
  public Answer sign(String method, String url, boolean pace, String... ua) {
    requireAgents(ua == null ? null : Arrays.asList(ua));
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("url", Objects.requireNonNull(url, "url"));
    body.put("ua", Arrays.asList(ua));
    body.put("method", Objects.requireNonNull(method, "method"));
    body.put("pace", pace);
    return JSON.convertValue(call("POST", "/v1/sign", body), Answer.class);
  }

  private static String signParameter(String method) {
    return "&sign=" + Calls.encode(Objects.requireNonNull(method, "method"));
  }

  private Answer checkWith(String url, String[] ua, String extra) {
    String query = "url=" + Calls.encode(url) + agents(ua) + extra;
    return JSON.convertValue(call("GET", "/v1/check?" + query, null), Answer.class);
  }

  /**
   * Asks about many URLs for the same agent(s) with {@code POST /v1/check}, {@link #MAX_BATCH}
   * at a time, one result per URL, in order. Past the bound of a batch's answer (8 MiB, which a
   * robots.txt made to fill every answer reaches) each further answer is the verdict alone. The
   * URLs first and the agents last, as {@link #check} takes them (and the TypeScript client's
   * {@code checkMany}). A bad URL is not thrown: its result has the {@link BatchResult#problem()}.
   * Each request of {@link #MAX_BATCH} URLs is a call of its own, with its own deadline and
   * retries.
   *
   * @param urls the URLs
   * @param ua the agent(s): at least one
   * @return one result per URL
   */
  public List<BatchResult> checkMany(List<String> urls, String... ua) {
    return batch(agentList(ua), urls, "");
  }

  /**
   * {@link #checkMany(List, String...)} reserving a fetch slot for each allowed URL ({@code
   * pace=true}): the URLs of one origin get staggered slots, an interval apart, each measured
   * from its answer.
   *
   * @param urls the URLs
   * @param ua the agent(s)
   * @return one result per URL
   */
  public List<BatchResult> checkManyPaced(List<String> urls, String... ua) {
    return batch(agentList(ua), urls, "?pace=true");
  }

  /**
   * {@link #checkMany(List, String...)} answering each URL with the verdict alone ({@code
   * view=verdict}).
   *
   * @param urls the URLs
   * @param ua the agent(s)
   * @return one result per URL
   */
  public List<BatchResult> checkManyVerdicts(List<String> urls, String... ua) {
    return batch(agentList(ua), urls, "?view=verdict");
  }

  /**
   * {@link #checkMany(List, String...)} signing each allowed URL's request ({@code sign=GET} or
   * {@code HEAD}): each allowed item has its own {@link Answer#sign()}; a disallowed item and an
   * item's problem have none.
   *
   * @param method {@code GET} or {@code HEAD}
   * @param urls the URLs
   * @param ua the agent(s)
   * @return one result per URL
   */
  public List<BatchResult> checkManySigned(String method, List<String> urls, String... ua) {
    return batch(agentList(ua), urls, "?" + signParameter(method).substring(1));
  }

  /**
   * {@link #checkManyPaced(List, String...)} and {@link #checkManySigned(String, List,
   * String...)} at once: each reserved slot's item is signed, its signature holding from that
   * item's slot; a deferred slot's item is not.
   *
   * @param method {@code GET} or {@code HEAD}
   * @param urls the URLs
   * @param ua the agent(s)
   * @return one result per URL
   */
  public List<BatchResult> checkManyPacedSigned(String method, List<String> urls, String... ua) {
    return batch(agentList(ua), urls, "?pace=true" + signParameter(method));
  }

  /**
   * The agents first, then the URLs: as before {@link #checkMany(List, String...)}.
   *
   * @param ua the agent(s)
   * @param urls the URLs
   * @return one result per URL
   * @deprecated the agents last, as {@link #check} takes them: {@link #checkMany(List,
   *     String...)}
   */
  @Deprecated
  public List<BatchResult> checkMany(List<String> ua, List<String> urls) {
    return batch(ua, urls, "");
  }

  /**
   * The agents first, then the URLs: as before {@link #checkManyPaced(List, String...)}.
   *
   * @param ua the agent(s)
   * @param urls the URLs
   * @return one result per URL
   * @deprecated the agents last: {@link #checkManyPaced(List, String...)}
   */
  @Deprecated
  public List<BatchResult> checkManyPaced(List<String> ua, List<String> urls) {
    return batch(ua, urls, "?pace=true");
  }

  /**
   * The agents first, then the URLs: as before {@link #checkManyVerdicts(List, String...)}.
   *
   * @param ua the agent(s)
   * @param urls the URLs
   * @return one result per URL
   * @deprecated the agents last: {@link #checkManyVerdicts(List, String...)}
   */
  @Deprecated
  public List<BatchResult> checkManyVerdicts(List<String> ua, List<String> urls) {
    return batch(ua, urls, "?view=verdict");
  }

  /**
   * The agents before the URLs: as before {@link #checkManySigned(String, List, String...)}.
   *
   * @param method {@code GET} or {@code HEAD}
   * @param ua the agent(s)
   * @param urls the URLs
   * @return one result per URL
   * @deprecated the agents last: {@link #checkManySigned(String, List, String...)}
   */
  @Deprecated
  public List<BatchResult> checkManySigned(String method, List<String> ua, List<String> urls) {
    return batch(ua, urls, "?" + signParameter(method).substring(1));
  }

  /**
   * The agents before the URLs: as before {@link #checkManyPacedSigned(String, List, String...)}.
   *
   * @param method {@code GET} or {@code HEAD}
   * @param ua the agent(s)
   * @param urls the URLs
   * @return one result per URL
   * @deprecated the agents last: {@link #checkManyPacedSigned(String, List, String...)}
   */
  @Deprecated
  public List<BatchResult> checkManyPacedSigned(String method, List<String> ua, List<String> urls) {
    return batch(ua, urls, "?pace=true" + signParameter(method));
  }

  private static List<String> agentList(String[] ua) {
    return ua == null ? null : Arrays.asList(ua);
  }

  private List<BatchResult> batch(List<String> ua, List<String> urls, String query) {
    requireAgents(ua);
    List<BatchResult> results = new ArrayList<>(urls.size());
    for (int start = 0; start < urls.size(); start += MAX_BATCH) {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("ua", ua);
      body.put("urls", urls.subList(start, Math.min(urls.size(), start + MAX_BATCH)));
      for (JsonNode item : call("POST", "/v1/check" + query, body).path("results")) {
        results.add(item.has("error")
            ? new BatchResult(null, JSON.convertValue(item.get("error"), Problem.class))
            : new BatchResult(JSON.convertValue(item, Answer.class), null));
      }
    }
    return results;
  }

  /**
   * Tells robotsd what the sites answered ({@code POST /v1/feedback}), {@link #MAX_BATCH}
   * reports at a time: a 429 or 503 ({@code Retry-After} honoured), any other 5xx, a timeout or
   * a connection refused or reset slows the origin down for the whole fleet; other statuses
   * ease a slowdown.
   *
   * @param reports the reports
   * @return one result per report, in order: taken, or the problem with it
   */
  public List<FeedbackResult> feedback(List<Report> reports) {
    List<FeedbackResult> results = new ArrayList<>(reports.size());
    for (int start = 0; start < reports.size(); start += MAX_BATCH) {
      Map<String, Object> body = Map.of(
          "reports", reports.subList(start, Math.min(reports.size(), start + MAX_BATCH)));
      for (JsonNode item : call("POST", "/v1/feedback", body).path("results")) {
        results.add(JSON.convertValue(item, FeedbackResult.class));
      }
    }
    return results;
  }

  /**
   * Reports one answer, as {@link #feedback} does.
   *
   * @param report what the site answered
   * @return the origin's pacing state after it
   * @throws ProblemException when robotsd did not take the report
   */
  public PaceState report(Report report) {
    List<FeedbackResult> results = feedback(List.of(report));
    if (results.size() != 1) {
      throw new RobotsdException("robotsd answered " + results.size() + " results for one report");
    }
    FeedbackResult result = results.get(0);
    if (result.error() != null) {
      throw new ProblemException(result.error(), null);
    }
    return result.pace();
  }

  /**
   * What robotsd holds for {@code url}'s origin ({@code GET /v1/robots}), fetching its
   * robots.txt if needed: its state, the parsed file (with its sitemaps) and its pacing state.
   *
   * @param url a URL of the origin
   * @param includeText also the file's text ({@link Robots#robotsTxt()})
   * @return what robotsd holds
   */
  public Robots robots(String url, boolean includeText) {
    String query = "url=" + Calls.encode(url) + (includeText ? "&include=robots_txt" : "");
    return JSON.convertValue(call("GET", "/v1/robots?" + query, null), Robots.class);
  }

  /**
   * The rules of {@code url}'s origin for one agent, shaped like crawler-commons'
   * {@code BaseRobotRules}: {@link RobotsRules#isAllowed}, the crawl-delay and the sitemaps,
   * with {@link RobotsRules.Builder}'s defaults ({@link RobotsRules#builder} sets others).
   * Asks robotsd now for the origin's file and the agent's crawl-delay (two calls); the rules
   * then answer from the verdicts they hold, and never throw: when robotsd cannot answer, they
   * fail closed. See {@link RobotsRules} for when they ask robotsd again.
   *
   * @param url a URL of the origin
   * @param ua the agent
   * @return the rules
   */
  public RobotsRules rules(String url, String ua) {
    return RobotsRules.builder(this, url, ua).build();
  }

  /**
   * After a fetch: the page's own robots rules for the crawler ({@code X-Robots-Tag} and robots
   * {@code meta} tags), its AI-use statements, and robots.txt's answer for its URL ({@code POST
   * /v1/page}). The page's URL is {@code response.uri()} (after redirects); only the headers
   * robotsd reads are sent ({@link Pages#headers}), and the body only when it is HTML, at most
   * its first {@link Pages#MAX_DOCUMENT_BYTES}, as bytes that robotsd reads in the page's own
   * charset.
   *
   * @param ua the crawler; null: the request's {@code User-Agent} header
   * @param response the response as received
   * @return the answer; its {@code documentCut} is true when the body was cut here
   */
  public PageAnswer page(String ua, HttpResponse<byte[]> response) {
    Pages.Built built = Pages.request(ua, response);
    PageAnswer answer = postPage(built.request());
    if (built.cut()) {
      answer = new PageAnswer(answer.allowed(), answer.check(), answer.robots(), answer.usage(),
          true, answer.encoding(), answer.record());
    }
    return answer;
  }

  /**
   * Sends a page as given ({@code POST /v1/page}): for a crawler that keeps its headers as
   * received, or has its document as text.
   *
   * @param request the page
   * @return robotsd's answer
   */
  public PageAnswer postPage(PageRequest request) {
    return JSON.convertValue(call("POST", "/v1/page", request), PageAnswer.class);
  }

  /**
   * How long to wait before asking again for a slot deferred by {@code wait}, or before
   * retrying a 503 of robotsd's: that, and a random jitter of up to a tenth of it, at most
   * {@link #MAX_JITTER}, so that the workers told the same time do not all come at once.
   *
   * @param wait the wait asked for
   * @param random a number in [0, 1)
   * @return the wait with its jitter
   */
  public static Duration askAgainDelay(Duration wait, double random) {
    if (wait.isNegative() || wait.isZero()) {
      return Duration.ZERO;
    }
    long jitter = Math.min(wait.toNanos() / 10, MAX_JITTER.toNanos());
    return wait.plusNanos((long) (random * jitter));
  }

  double random() {
    return random.getAsDouble();
  }

  /**
   * The retries of robotsd's 503s one call of the caller's may still make: one budget for every
   * request the call sends, so that a call built of several requests (the fetcher's warm-up,
   * then its paced check) sends at most {@code 1 + maxRetries} requests robotsd refuses, as one
   * request would.
   */
  static final class Retries {
    private int left;

    private Retries(int left) {
      this.left = left;
    }
  }

  /** A fresh budget of {@link Builder#maxRetries} retries, for one call. */
  Retries retries() {
    return new Retries(maxRetries);
  }

  /**
   * A check within {@code retries}, for the fetcher. {@code handOff}: a 503 of robotsd's that
   * the budget and the deadline leave a retry for is waited out (its {@code Retry-After},
   * spending the retry) and answered null rather than sent again, as the caller's next request
   * is the retry (the fetcher's warm-up, followed by its paced check).
   */
  Answer checkWithin(Retries retries, boolean handOff, String url, String ua, String extra, long[] answeredAt) {
    String query = "url=" + Calls.encode(url) + agents(new String[] {ua}) + extra;
    JsonNode json = call("GET", "/v1/check?" + query, null, answeredAt, retries, handOff);
    return json == null ? null : JSON.convertValue(json, Answer.class);
  }

  /** The query parameter asking robotsd to sign a request of {@code method}. */
  static String signQuery(String method) {
    return signParameter(method);
  }

  /** Sends one call, retrying robotsd's 503s within the deadline, and returns its JSON. */
  private JsonNode call(String method, String pathAndQuery, Object body) {
    return call(method, pathAndQuery, body, null, retries(), false);
  }

  /**
   * {@code answeredAt[0]}, when given, is set to the {@link System#nanoTime()} the answer's
   * headers arrived at: a slot's {@code wait_ms} counts from robotsd's answer, and reading the
   * body (a cold JVM's first JSON) can take longer than the lateness a slot allows.
   */
  private JsonNode call(String method, String pathAndQuery, Object body, long[] answeredAt,
      Retries retries, boolean handOff) {
    long deadline = System.nanoTime() + timeout.toNanos();
    byte[] json;
    try {
      json = body == null ? null : JSON.writeValueAsBytes(body);
    } catch (JsonProcessingException e) {
      throw new RobotsdException("robotsd: cannot write the request: " + e.getMessage(), e);
    }
    for (;;) {
      long[] headersAt = {System.nanoTime()};
      HttpResponse<byte[]> response = exchange(method, pathAndQuery, json, deadline, headersAt);
      int status = response.statusCode();
      if (status == 200) {
        if (answeredAt != null) {
          answeredAt[0] = headersAt[0];
        }
        try {
          return JSON.readTree(response.body());
        } catch (IOException e) {
          throw new RobotsdException("robotsd: " + method + " " + Calls.path(pathAndQuery)
              + ": the answer is not JSON", e);
        }
      }
      Problem problem = Calls.problem(response);
      ProblemException refused = new ProblemException(problem,
          response.headers().firstValue("x-request-id").orElse(null));
      if (ownUnavailable(response, problem) && retries.left > 0) {
        Duration wait = askAgainDelay(Calls.retryAfter(response), random());
        if (System.nanoTime() + wait.toNanos() < deadline) {
          retries.left--;
          try {
            Sleeper.sleep(wait);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UnavailableException("robotsd: interrupted while waiting to retry", e);
          }
          if (handOff) {
            return null;
          }
          continue;
        }
      }
      throw refused;
    }
  }

  /**
   * Whether {@code response} is a 503 of robotsd's own: {@code application/problem+json} whose
   * type is robotsd's ({@code overloaded}, {@code bodies-in-flight}, {@code connection-limit},
   * {@code cache-full}: robotsd did nothing with the request, and says when to come back). A
   * proxy's or load balancer's 503 page says neither, and may follow a request that was acted
   * on: it is not retried. No {@code X-Request-Id} is asked for: robotsd's connection-limit
   * answer, written before any request is read, has none.
   */
  static boolean ownUnavailable(HttpResponse<?> response, Problem problem) {
    if (response.statusCode() != 503 || problem.status() != 503 || problem.type() == null
        || !problem.type().startsWith(PROBLEM_PREFIX)) {
      return false;
    }
    String type = response.headers().firstValue("content-type").orElse("");
    int semicolon = type.indexOf(';');
    return (semicolon < 0 ? type : type.substring(0, semicolon)).strip()
        .equalsIgnoreCase("application/problem+json");
  }

  private HttpResponse<byte[]> exchange(
      String method, String pathAndQuery, byte[] json, long deadline, long[] headersAt) {
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      throw new UnavailableException("robotsd: " + method + " " + baseUrl + Calls.path(pathAndQuery)
          + " timed out after " + timeout.toMillis() + " ms", null);
    }
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(baseUrl + pathAndQuery))
        .timeout(Duration.ofNanos(left))
        .header("Accept", "application/json, application/problem+json")
        .method(method, json == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofByteArray(json));
    if (json != null) {
      request.header("Content-Type", "application/json");
    }
    if (token != null && !token.isEmpty()) {
      request.header("Authorization", "Bearer " + token);
    }
    if (requestId != null) {
      request.header("X-Request-Id", requestId);
    }
    CompletableFuture<HttpResponse<byte[]>> future =
        http.sendAsync(request.build(), info -> {
          headersAt[0] = System.nanoTime();
          return HttpResponse.BodyHandlers.ofByteArray().apply(info);
        });
    try {
      // The request's own timeout ends at the headers; the body is bounded here too.
      return future.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      future.cancel(true);
      throw new UnavailableException("robotsd: " + method + " " + baseUrl + Calls.path(pathAndQuery)
          + " timed out after " + timeout.toMillis() + " ms", e);
    } catch (InterruptedException e) {
      future.cancel(true);
      Thread.currentThread().interrupt();
      throw new UnavailableException("robotsd: interrupted while asking " + baseUrl, e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new UnavailableException("robotsd: " + method + " " + baseUrl + Calls.path(pathAndQuery)
          + " failed: " + cause, cause);
    }
  }

  private static String agents(String[] ua) {
    requireAgents(ua == null ? null : Arrays.asList(ua));
    StringBuilder out = new StringBuilder();
    for (String agent : ua) {
      out.append("&ua=").append(Calls.encode(agent));
    }
    return out.toString();
  }

  private static void requireAgents(List<String> ua) {
    if (ua == null || ua.isEmpty()) {
      throw new IllegalArgumentException("ua: give at least one user agent");
    }
  }
}
