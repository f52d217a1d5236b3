package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * One robots rule that applied to the crawler, and where it was written.
 *
 * @param rule the rule as written: {@code noindex}, {@code max-snippet:50}, ...
 * @param agent the agent it named; null: every crawler
 * @param header its header's position among the headers sent, from 0; null for a meta tag
 * @param line its meta tag's line in the document, from 1; null for a header
 * @param ignored {@code unknown} or {@code unparseable} when it has no effect; else null
 * @param looksLike the rule's words when it is unknown as a whole but each word is a rule
 */
public record PageRule(
    String rule, String agent, Integer header, Integer line, String ignored, @JsonProperty("looks_like") List<String> looksLike) {}
