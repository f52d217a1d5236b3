package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Map;

/**
 * A page's AI-use statements, beside robots.txt's ({@code PageUsageJson}).
 *
 * @param robotsTxt robots.txt's preferences for the URL; null when none applies
 * @param contentUsageHeader the page's {@code Content-Usage} header
 * @param tdm TDMRep, from the headers and the document
 * @param vocabulary the revision of aipref's vocabulary {@code combined} follows
 * @param combined per category: robots.txt's statement and the header's, combined
 */
public record PageUsage(
    @JsonProperty("robots_txt") Usage robotsTxt,
    @JsonProperty("content_usage_header") ContentUsageHeader contentUsageHeader,
    Tdm tdm,
    String vocabulary,
    Map<String, Combined> combined) {}
