package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * The groups of robots.txt that applied, merged.
 *
 * @param agents their first 16 user-agent values
 * @param lines the lines of those user-agent lines
 * @param global true when the group is the {@code *} group
 * @param agentsTotal how many user-agent lines there are when {@code agents} shows fewer
 * @param truncated true when {@code agents} was cut to the answer's bounds
 */
public record Group(
    List<String> agents, List<Integer> lines, boolean global, @JsonProperty("agents_total") Integer agentsTotal, Boolean truncated) {}
