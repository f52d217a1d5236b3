package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * What a site answered a worker for one page ({@code ReportItem}), for {@code POST
 * /v1/feedback}: a status (with the {@code Retry-After} header as received), a timeout, or a
 * connection refused or reset. A 429 or 503 ({@code Retry-After} honoured), any other 5xx, a
 * timeout, or a connection refused or reset slows the origin down for the whole fleet; other
 * statuses ease a slowdown. Null components are left out of the request.
 *
 * @param url the page's URL
 * @param status the HTTP status the site answered; null with a timeout or a connection failure
 * @param retryAfter the {@code Retry-After} header's value as received (seconds or an HTTP date)
 * @param timeout true when the site did not answer within the fetch's own time limit (the wait
 *     for the slot not counted)
 * @param connection {@code refused} or {@code reset} when the connection failed before any answer
 * @param responseMs how long the site took to answer, in milliseconds; null: not said
 */
public record Report(
    String url, Integer status, @JsonProperty("retry_after") String retryAfter, Boolean timeout, String connection, @JsonProperty("response_ms") Long responseMs) {

  /** {@link #connection()} of a connection the site refused. */
  public static final String CONNECTION_REFUSED = "refused";

  /** {@link #connection()} of a connection reset (or closed) before any answer. */
  public static final String CONNECTION_RESET = "reset";

  /**
   * A report of a status.
   *
   * @param url the page's URL
   * @param status the HTTP status the site answered
   * @return the report
   */
  public static Report ofStatus(String url, int status) {
    return new Report(url, status, null, null, null, null);
  }

  /**
   * A report of a 429 or 503 with its {@code Retry-After} header.
   *
   * @param url the page's URL
   * @param status the HTTP status the site answered
   * @param retryAfter the header's value as received; null when there was none
   * @return the report
   */
  public static Report ofStatus(String url, int status, String retryAfter) {
    return new Report(url, status, retryAfter, null, null, null);
  }

  /**
   * A report of a fetch the site did not answer within its own time limit.
   *
   * @param url the page's URL
   * @return the report
   */
  public static Report ofTimeout(String url) {
    return new Report(url, null, null, true, null, null);
  }

  /**
   * A report of a connection refused or reset before any answer.
   *
   * @param url the page's URL
   * @param connection {@link #CONNECTION_REFUSED} or {@link #CONNECTION_RESET}
   * @return the report
   */
  public static Report ofConnection(String url, String connection) {
    return new Report(url, null, null, null, connection, null);
  }

  /**
   * This report with the time the site took to answer.
   *
   * @param ms milliseconds, measured the same way for every page
   * @return the report
   */
  public Report withResponseMs(long ms) {
    return new Report(url, status, retryAfter, timeout, connection, ms);
  }
}
