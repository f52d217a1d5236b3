package io.github.robotsd.client.model;

/**
 * One category's AI usage preference, and the line that set it.
 *
 * @param value {@code y} or {@code n}
 * @param line the robots.txt line
 */
public record Preference(String value, int line) {}
