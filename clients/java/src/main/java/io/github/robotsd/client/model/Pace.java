package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Duration;

/**
 * A fetch slot robotsd reserved for one fetch ({@code PaceJson}), kept for the whole fleet.
 *
 * @param outcome {@code reserved} (the slot is this worker's) or {@code deferred} (too far
 *     ahead: nothing reserved, ask again after {@code waitMs})
 * @param next {@code fetch} or {@code ask_again}
 * @param lane the fetches that share this pace ({@code host:example.com} by default)
 * @param notBefore when the fetch may start, or when to ask again, on robotsd's clock
 * @param waitMs milliseconds from the answer until {@code notBefore}: wait this, not the clock
 * @param intervalMs the interval kept before this slot, after any slowdown
 * @param intervalSource {@code crawl_delay}, {@code default} or {@code pushback}
 * @param crawlDelayLine the line of the group's crawl-delay; null when it has none
 * @param capped whether the crawl-delay was capped at robotsd's {@code --max-crawl-delay}
 * @param slowdown the origin's slowdown factor: 1 unless the site pushed back
 * @param retryAfterUntil the end of a {@code Retry-After} the site asked for, while it lasts
 * @param scope {@code fleet} (robotsd's shared store decided) or {@code local}
 * @param fleetSize how many replicas robotsd counts itself among when it decides alone
 * @param fleetIndex its place among them; null when not set
 */
public record Pace(
    String outcome,
    String next,
    String lane,
    @JsonProperty("not_before") String notBefore,
    @JsonProperty("wait_ms") long waitMs,
    @JsonProperty("interval_ms") long intervalMs,
    @JsonProperty("interval_source") String intervalSource,
    @JsonProperty("crawl_delay_line") Integer crawlDelayLine,
    boolean capped,
    double slowdown,
    @JsonProperty("retry_after_until") String retryAfterUntil,
    String scope,
    @JsonProperty("fleet_size") int fleetSize,
    @JsonProperty("fleet_index") Integer fleetIndex) {

  /**
   * Whether the slot was reserved rather than deferred.
   *
   * @return true when the fetch may start after {@link #waitDuration()}
   */
  public boolean reserved() {
    return "reserved".equals(outcome);
  }

  /**
   * How long to wait from the answer: until the fetch may start, or, deferred, until asking
   * again.
   *
   * @return {@code waitMs} as a duration
   */
  public Duration waitDuration() {
    return Duration.ofMillis(Math.max(0, waitMs));
  }
}
