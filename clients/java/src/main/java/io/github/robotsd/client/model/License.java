package io.github.robotsd.client.model;

/**
 * A {@code License:} line (RSL 1.0).
 *
 * @param url the license document's URL
 * @param line its line
 */
public record License(String url, int line) {}
