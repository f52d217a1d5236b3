package io.github.robotsd.client.model;

/**
 * The robots.txt line that decided.
 *
 * @param directive {@code allow} or {@code disallow}
 * @param pattern the path pattern as written (cut at 2,048 bytes of JSON)
 * @param line its line in robots.txt, from 1
 * @param truncated true when {@code pattern} was cut; else null or false
 */
public record Rule(String directive, String pattern, int line, Boolean truncated) {}
