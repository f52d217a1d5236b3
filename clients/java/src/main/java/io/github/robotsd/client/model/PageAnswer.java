package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * robotsd's answer about a fetched page ({@code PageResponse}): robots.txt's answer for its URL
 * and, when robots.txt allows it, the page's own robots rules for the crawler and its AI-use
 * statements.
 *
 * @param allowed whether robots.txt allows the URL
 * @param check robots.txt's answer for the URL
 * @param robots the page's rules in force for the crawler; null when robots.txt disallows it
 * @param usage the page's AI-use statements; null when robots.txt disallows it
 * @param documentCut true when only the document's first 2 MiB were read
 * @param encoding the charset the document was read in; null when none was sent
 * @param record what the page and its robots.txt said, compact, when asked for
 */
public record PageAnswer(
    boolean allowed,
    Answer check,
    PageRobots robots,
    PageUsage usage,
    @JsonProperty("document_cut") Boolean documentCut,
    String encoding,
    JsonNode record) {

  /**
   * Whether the crawler may follow the page's links: true unless its rules say nofollow (or
   * none). True when no rules were read (robots.txt disallows the URL): nothing forbids it.
   *
   * @return whether to follow the page's links
   */
  public boolean follow() {
    return robots == null || robots.follow();
  }

  /**
   * Whether the crawler may index the page: true unless its rules say noindex (or none).
   *
   * @return whether to index the page
   */
  public boolean index() {
    return robots == null || robots.index();
  }
}
