package io.github.robotsd.client.model;

import java.util.List;

/**
 * One aipref category combined over robots.txt and the header ({@code CombinedJson}).
 *
 * @param value {@code n} (any statement says n), else {@code y}, else null (unknown)
 * @param sources the statements that gave it a value: {@code robots_txt}, {@code header}
 */
public record Combined(String value, List<String> sources) {}
