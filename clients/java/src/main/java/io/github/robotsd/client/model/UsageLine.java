package io.github.robotsd.client.model;

import java.util.Map;

/**
 * A content-usage or content-signal line of a group.
 *
 * @param source {@code content-usage} or {@code content-signal}
 * @param line its line
 * @param statement the statement as written
 * @param path the path it applies to; null for the whole site
 * @param preferences the labels it states and their values
 */
public record UsageLine(String source, int line, String statement, String path, Map<String, String> preferences) {}
