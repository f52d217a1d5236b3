package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/**
 * The AI usage preferences that apply to a URL, each vocabulary apart, by category label.
 *
 * @param contentUsage {@code Content-Usage} preferences by label; null when none
 * @param contentSignal {@code Content-Signal} preferences by label; null when none
 * @param rsl what each {@code License:} line gives the URL (robotsd's {@code --rsl}); else null
 * @param rslTotal how many license URLs there are when {@code rsl} shows fewer
 * @param contentUsageTotal how many categories there are when {@code contentUsage} shows fewer
 * @param contentSignalTotal how many there are when {@code contentSignal} shows fewer
 * @param truncated true when a list here was cut to the answer's bounds
 */
public record Usage(
    @JsonProperty("content_usage") Map<String, Preference> contentUsage,
    @JsonProperty("content_signal") Map<String, Preference> contentSignal,
    List<RslTerms> rsl,
    @JsonProperty("rsl_total") Integer rslTotal,
    @JsonProperty("content_usage_total") Integer contentUsageTotal,
    @JsonProperty("content_signal_total") Integer contentSignalTotal,
    Boolean truncated) {}
