package io.github.robotsd.client;

import io.github.robotsd.client.model.Problem;
import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** How {@link RobotsdClient} reads robotsd's answers and writes its requests' queries. */
final class Calls {
  private Calls() {}

  /** robotsd's own Retry-After (whole seconds): 1 s when it has none, at most a minute. */
  static Duration retryAfter(HttpResponse<?> response) {
    Duration wait = RetryAfter.parse(response.headers().firstValue("retry-after").orElse(null),
        System.currentTimeMillis());
    if (wait == null) {
      return Duration.ofSeconds(1);
    }
    return wait.compareTo(RobotsdClient.MAX_RETRY_WAIT) > 0 ? RobotsdClient.MAX_RETRY_WAIT : wait;
  }

  /** The problem of an error answer; one that is not problem+json (a proxy's page) still becomes one. */
  static Problem problem(HttpResponse<byte[]> response) {
    try {
      Problem problem = RobotsdClient.JSON.readValue(response.body(), Problem.class);
      if (problem.type() != null && problem.status() != 0) {
        return problem;
      }
    } catch (IOException | RuntimeException e) {
      // Not problem+json (a proxy's page): described below.
    }
    String text = new String(response.body(), StandardCharsets.UTF_8).strip();
    return new Problem("about:blank", "HTTP " + response.statusCode(), response.statusCode(),
        text.length() > 1000 ? text.substring(0, 1000) : text, null);
  }

  /** The path of a path and query, for messages: a query holds URLs, which may be private. */
  static String path(String pathAndQuery) {
    int query = pathAndQuery.indexOf('?');
    return query < 0 ? pathAndQuery : pathAndQuery.substring(0, query);
  }

  /** A query parameter's value, encoded. */
  static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }
}
