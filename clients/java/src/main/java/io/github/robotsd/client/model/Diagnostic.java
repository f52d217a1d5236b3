package io.github.robotsd.client.model;

/**
 * What robotsd found on a line of robots.txt.
 *
 * @param line the line
 * @param kind what it found
 * @param key the line's key, when it matters
 */
public record Diagnostic(int line, String kind, String key) {}
