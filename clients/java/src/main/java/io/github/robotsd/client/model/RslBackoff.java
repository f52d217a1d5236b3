package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * A run of failures to fetch a license document.
 *
 * @param since when the run began
 * @param failures how many failures
 * @param nextRetry when the next fetch is due
 * @param lastError the last failure
 */
public record RslBackoff(String since, int failures, @JsonProperty("next_retry") String nextRetry, @JsonProperty("last_error") String lastError) {}
