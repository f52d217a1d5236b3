package io.github.robotsd.client.model;

/**
 * A bot challenge (a firewall asking for a browser) that answered a robots.txt fetch instead of
 * the site ({@code ChallengeJson}).
 *
 * @param vendor whose: {@code cloudflare}, {@code aws-waf}, {@code datadome}, {@code human} or
 *     {@code imperva}
 * @param marker what showed it: a header or a marker in the page
 */
public record Challenge(String vendor, String marker) {}
