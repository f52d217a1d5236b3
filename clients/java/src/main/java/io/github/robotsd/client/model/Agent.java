package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * The user agents asked about, and the product token robotsd used for each.
 *
 * @param input the values as given (the first 8, each cut at 256 bytes of JSON)
 * @param tokens the product token used for each, parallel to {@code input}
 * @param inputTotal how many agents were asked about when {@code input} shows fewer; else null
 * @param truncated true when {@code input} or {@code tokens} was cut to the answer's bounds
 */
public record Agent(List<String> input, List<String> tokens, @JsonProperty("input_total") Integer inputTotal, Boolean truncated) {}
