package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * A page's robots rules in force for the crawler ({@code PageRobotsJson}), combined as Google
 * combines them: where they conflict, the more restrictive wins.
 *
 * @param index no noindex or none
 * @param follow no nofollow or none
 * @param snippet no nosnippet (nor max-snippet:0)
 * @param maxSnippet the longest text snippet in characters; null: no limit
 * @param maxImagePreview {@code none}, {@code standard} or {@code large}; null: not stated
 * @param maxVideoPreview the longest video preview in seconds (0: a static image at most, as
 *     with nosnippet); null: no limit
 * @param imageIndex no noimageindex
 * @param translate no notranslate
 * @param indexIfEmbedded indexifembedded with noindex
 * @param unavailableAfter the earliest unavailable_after date; null: none
 * @param indexRule the rule that made {@code index} false; null when it is true
 * @param at when the rules were read
 * @param uninterpreted the rules recognised but not interpreted (noarchive, noai, ...)
 * @param rules every rule that applied to the crawler, ignored ones included (at most 64)
 * @param rulesTotal how many rules applied when {@code rules} lists fewer
 */
public record PageRobots(
    boolean index,
    boolean follow,
    boolean snippet,
    @JsonProperty("max_snippet") Long maxSnippet,
    @JsonProperty("max_image_preview") String maxImagePreview,
    @JsonProperty("max_video_preview") Long maxVideoPreview,
    @JsonProperty("image_index") boolean imageIndex,
    boolean translate,
    @JsonProperty("index_if_embedded") boolean indexIfEmbedded,
    @JsonProperty("unavailable_after") String unavailableAfter,
    @JsonProperty("index_rule") PageRule indexRule,
    String at,
    List<String> uninterpreted,
    List<PageRule> rules,
    @JsonProperty("rules_total") Integer rulesTotal) {}
