package io.github.robotsd.client.model;

/**
 * A user-agent line of a group.
 *
 * @param value the agent as written
 * @param line its line
 */
public record AgentLine(String value, int line) {}
