package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Where a license document came from, as {@link Source} is for robots.txt.
 *
 * @param status the HTTP status it was fetched with
 * @param fetchedAt when it was fetched
 * @param expiresAt when the copy expires
 * @param sha256 the SHA-256 of the copy
 * @param bytes its size
 * @param finalUrl the URL after redirects
 * @param cache how the cache served it
 * @param backoff the run of failures to fetch it, if any
 */
public record RslSource(
    Integer status,
    @JsonProperty("fetched_at") String fetchedAt,
    @JsonProperty("expires_at") String expiresAt,
    String sha256,
    Long bytes,
    @JsonProperty("final_url") String finalUrl,
    String cache,
    RslBackoff backoff) {}
