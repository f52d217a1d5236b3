package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * robotsd's answer to a check ({@code CheckResponse}): the verdict, the reason, and the rule,
 * group and file behind it. An answer asked with {@code view=verdict}, and an item of a batch
 * past the bound of the batch's answer (8 MiB), is the verdict alone ({@code VerdictResponse}):
 * only {@code allowed}, {@code reason}, {@code pace} and {@code record} are set, as right as a
 * full answer's, and {@link #full()} is false.
 *
 * @param allowed whether the agent may fetch the URL
 * @param verdict {@code allow} or {@code disallow}; null in a verdict alone
 * @param reason why: {@code matched_rule}, {@code no_matching_rule}, {@code no_robots_txt}, ...
 * @param url the URL as robotsd read it
 * @param robotsUrl the robots.txt that decided
 * @param agent the agents asked about and the product token used for each
 * @param rule the line that decided; null when no rule matched
 * @param group the groups that applied, merged; null when none did
 * @param crawlDelay the applied groups' crawl-delay in seconds; null when there is none
 * @param usage the AI usage preferences for the URL; null when none applies
 * @param robots where the robots.txt came from
 * @param pace the fetch slot reserved (a paced check); null without pacing and when disallowed
 * @param record what robots.txt said of the URL, compact ({@code record=true}); null otherwise
 * @param sign the Web Bot Auth signature for exactly this request, when one was asked ({@code
 *     sign=GET} or {@code HEAD}) and the URL is allowed (a paced check's slot reserved, not
 *     deferred); null otherwise
 */
public record Answer(
    boolean allowed,
    String verdict,
    String reason,
    String url,
    @JsonProperty("robots_url") String robotsUrl,
    Agent agent,
    Rule rule,
    Group group,
    @JsonProperty("crawl_delay") Double crawlDelay,
    Usage usage,
    Source robots,
    Pace pace,
    JsonNode record,
    Sign sign) {

  /**
   * Whether this is a full answer rather than the verdict alone: every full answer has a
   * verdict.
   *
   * @return true for a full answer
   */
  public boolean full() {
    return verdict != null;
  }
}
