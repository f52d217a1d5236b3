package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * The body of {@code POST /v1/page}: a fetched page as the crawler received it. Null components
 * are left out.
 *
 * @param url the page's URL, after redirects
 * @param ua the crawler: product tokens or whole {@code User-Agent} headers
 * @param headers the response headers robotsd reads, {@code [name, value]} in order
 * @param html the document as text; null: none
 * @param htmlBase64 the document's bytes in base64 instead, read in the page's own charset
 * @param record true asks for the answer's record
 */
public record PageRequest(
    String url, List<String> ua, List<List<String>> headers, String html, @JsonProperty("html_base64") String htmlBase64, Boolean record) {}
