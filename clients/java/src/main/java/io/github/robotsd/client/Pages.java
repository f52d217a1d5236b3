package io.github.robotsd.client;

import io.github.robotsd.client.model.PageRequest;
import java.net.http.HttpHeaders;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Locale;

/**
 * What {@link RobotsdClient#page} sends of a fetched page ({@code POST /v1/page}, robotsd's
 * docs/page.md): only the headers robotsd reads, and the document only when it is HTML, cut to
 * the part robotsd reads.
 */
public final class Pages {
  private Pages() {}

  /** How much of a document robotsd reads: its first 2 MiB, as Googlebot reads HTML. */
  public static final int MAX_DOCUMENT_BYTES = 2 << 20;

  /** The response headers robotsd reads of a page, in the order they are sent. */
  public static final List<String> HEADER_NAMES = List.of(
      "Robots-Tag", "X-Robots-Tag", "Content-Usage", "Tdm-Reservation", "Tdm-Policy", "Content-Type");

  /** The request built from a response, and whether its document was cut here. */
  record Built(PageRequest request, boolean cut) {}

  /**
   * The headers of {@code headers} robotsd reads, as {@link RobotsdClient#page} sends them: name
   * by name in the order of {@link #HEADER_NAMES}, each name's values in the order received. An
   * {@link HttpHeaders} keeps one name's values in order but not how different names were
   * interleaved: the answer does not depend on it, but the header positions it gives are
   * positions in this list.
   *
   * @param headers a response's headers
   * @return {@code [name, value]} pairs
   */
  public static List<List<String>> headers(HttpHeaders headers) {
    List<List<String>> pairs = new ArrayList<>();
    for (String name : HEADER_NAMES) {
      for (String value : headers.allValues(name)) {
        pairs.add(List.of(name, value));
      }
    }
    return pairs;
  }

  static Built request(String ua, HttpResponse<byte[]> response) {
    String agent = ua;
    if (agent == null || agent.isEmpty()) {
      agent = response.request().headers().firstValue("User-Agent").orElse(RobotsdFetcher.DEFAULT_AGENT);
    }
    List<List<String>> headers = headers(response.headers());
    byte[] body = response.body();
    String html = null;
    boolean cut = false;
    if (body != null && body.length > 0 && isHtml(headers, body)) {
      cut = body.length > MAX_DOCUMENT_BYTES;
      byte[] sent = cut ? Arrays.copyOf(body, MAX_DOCUMENT_BYTES) : body;
      html = Base64.getEncoder().encodeToString(sent);
    }
    PageRequest request = new PageRequest(response.uri().toString(), List.of(agent),
        headers.isEmpty() ? null : headers, null, html, null);
    return new Built(request, cut);
  }

  /**
   * Whether a response is an HTML document: the media type of its first {@code Content-Type},
   * or without one, what the body starts with (WHATWG MIME sniffing's HTML patterns).
   */
  static boolean isHtml(List<List<String>> headers, byte[] body) {
    for (List<String> pair : headers) {
      if (pair.get(0).equals("Content-Type") && !pair.get(1).isBlank()) {
        String type = pair.get(1).split(";", 2)[0].strip().toLowerCase(Locale.ROOT);
        return type.equals("text/html") || type.equals("application/xhtml+xml");
      }
    }
    return sniffsAsHtml(body);
  }

  private static final List<String> HTML_STARTS = List.of(
      "<!doctype html", "<html", "<head", "<script", "<iframe", "<h1", "<div", "<font", "<table",
      "<a", "<style", "<title", "<b", "<body", "<br", "<p", "<!--");

  private static boolean sniffsAsHtml(byte[] body) {
    int start = 0;
    while (start < body.length && (body[start] == ' ' || body[start] == '\t' || body[start] == '\n'
        || body[start] == '\r' || body[start] == '\f')) {
      start++;
    }
    String head = new String(body, start, Math.min(body.length - start, 32), StandardCharsets.ISO_8859_1)
        .toLowerCase(Locale.ROOT);
    for (String tag : HTML_STARTS) {
      // The tag must end there: "<a" is a link, "<abbr" is not enough to call the body HTML.
      if (head.startsWith(tag) && head.length() > tag.length()) {
        char after = head.charAt(tag.length());
        if (after == ' ' || after == '>') {
          return true;
        }
      }
    }
    return false;
  }
}
