package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * A run of failures to fetch an origin's robots.txt.
 *
 * @param since when the run began
 * @param failures how many failures
 * @param nextRetry when the next fetch is due
 * @param until when the answer's reason changes if the origin stays unreachable; null after
 * @param lastError the last failure
 */
public record Backoff(String since, int failures, @JsonProperty("next_retry") String nextRetry, String until, @JsonProperty("last_error") String lastError) {}
