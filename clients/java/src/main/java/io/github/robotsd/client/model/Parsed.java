package io.github.robotsd.client.model;

import java.util.List;

/**
 * A parsed robots.txt.
 *
 * @param groups its groups
 * @param sitemaps its {@code Sitemap:} lines
 * @param licenses its {@code License:} lines (RSL 1.0), reported only
 * @param diagnostics what robotsd found on its lines
 * @param lines how many lines it has
 */
public record Parsed(
    List<GroupDetail> groups,
    List<Sitemap> sitemaps,
    List<License> licenses,
    List<Diagnostic> diagnostics,
    int lines) {}
