package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * What robotsd holds for an origin ({@code RobotsResponse}, {@code GET /v1/robots}).
 *
 * @param origin the origin
 * @param robotsUrl its robots.txt
 * @param state {@code parsed}, {@code no_robots_txt}, {@code unreachable} or {@code refused}
 * @param robots where the copy came from
 * @param parsed the parsed file, when there is one
 * @param robotsTxt the file's text, when asked for and a parsed file is held
 * @param pace the origin's pacing state; null when none is kept
 */
public record Robots(
    String origin,
    @JsonProperty("robots_url") String robotsUrl,
    String state,
    Source robots,
    Parsed parsed,
    @JsonProperty("robots_txt") String robotsTxt,
    PaceState pace) {}
