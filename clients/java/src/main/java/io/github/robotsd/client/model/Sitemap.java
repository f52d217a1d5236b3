package io.github.robotsd.client.model;

/**
 * A {@code Sitemap:} line.
 *
 * @param url the sitemap's URL
 * @param line its line
 */
public record Sitemap(String url, int line) {}
