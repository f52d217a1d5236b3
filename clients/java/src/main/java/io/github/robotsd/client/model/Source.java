package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Where the robots.txt behind an answer came from ({@code RobotsSourceJson}).
 *
 * @param status the HTTP status it was fetched with
 * @param fetchedAt when it was fetched
 * @param sha256 the SHA-256 of the copy
 * @param expiresAt when the copy expires
 * @param bytes its size
 * @param finalUrl the URL after redirects
 * @param challenged the bot challenge that answered the fetch instead of the site, or null
 * @param cache how the cache served it: {@code hit}, {@code miss}, {@code stale},
 *     {@code coalesced} or {@code shared}
 * @param backoff the run of failures to fetch it, if any
 */
public record Source(
    Integer status,
    @JsonProperty("fetched_at") String fetchedAt,
    String sha256,
    @JsonProperty("expires_at") String expiresAt,
    Long bytes,
    @JsonProperty("final_url") String finalUrl,
    Challenge challenged,
    String cache,
    Backoff backoff) {}
