package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * One group of a parsed robots.txt.
 *
 * @param agents its user-agent lines
 * @param rules its allow and disallow lines
 * @param crawlDelay its crawl-delay in seconds; null when it has none
 * @param usage its content-usage and content-signal lines
 */
public record GroupDetail(List<AgentLine> agents, List<Rule> rules, @JsonProperty("crawl_delay") Double crawlDelay, List<UsageLine> usage) {}
