package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/**
 * A page's {@code Content-Usage} header.
 *
 * @param state {@code absent}, {@code unparseable} or {@code stated}
 * @param categories each label stated {@code y} or {@code n} (at most 16)
 * @param headers the positions of its field lines among the headers sent
 * @param categoriesTotal how many labels were stated when {@code categories} shows fewer
 */
public record ContentUsageHeader(
    String state, Map<String, String> categories, List<Integer> headers, @JsonProperty("categories_total") Integer categoriesTotal) {}
