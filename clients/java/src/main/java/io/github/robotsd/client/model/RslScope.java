package io.github.robotsd.client.model;

import java.util.List;

/**
 * The values of {@code <permits>} or {@code <prohibits>} elements, by type.
 *
 * @param usage the usages
 * @param user the users
 * @param geo the regions
 */
public record RslScope(List<String> usage, List<String> user, List<String> geo) {}
