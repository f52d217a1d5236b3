package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * What one {@code License:} line gives a URL: the RSL 1.0 terms covering it, or why none do.
 *
 * @param licenseUrl the license document's URL
 * @param line the {@code License:} line
 * @param state {@code covered}, {@code not_covered}, {@code fetch_failed}, {@code invalid},
 *     {@code refused} or {@code not_fetched}
 * @param reason why there are no terms, when the document could not be used
 * @param contents the covering {@code <content>} elements
 * @param contentsTotal how many there are when {@code contents} shows fewer
 * @param truncated true when this report was cut to the answer's bounds
 * @param source where the document came from
 */
public record RslTerms(
    @JsonProperty("license_url") String licenseUrl,
    int line,
    String state,
    String reason,
    List<RslContent> contents,
    @JsonProperty("contents_total") Integer contentsTotal,
    Boolean truncated,
    RslSource source) {}
