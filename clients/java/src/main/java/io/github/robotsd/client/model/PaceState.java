package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * An origin's pacing state, as a report left it or as robotsd holds it ({@code PaceStateJson}).
 *
 * @param lane the pace's lane
 * @param slowdown the slowdown factor now: 1 unless the site pushed back
 * @param retryAfterUntil the end of a {@code Retry-After} the site asked for, while it lasts
 * @param lastSlot the last slot handed out, if any
 * @param scope {@code fleet} or {@code local}: where the state was read
 */
public record PaceState(String lane, double slowdown, @JsonProperty("retry_after_until") String retryAfterUntil, @JsonProperty("last_slot") String lastSlot, String scope) {}
