package io.github.robotsd.client;

import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/** A {@code Retry-After} header (RFC 9110 §10.2.3): delay-seconds or an HTTP date. */
final class RetryAfter {
  private RetryAfter() {}

  /**
   * The wait {@code value} asks for, from {@code nowMillis} (the wall clock, which an HTTP date
   * is on); null when there is no value or it cannot be read.
   */
  static Duration parse(String value, long nowMillis) {
    if (value == null) {
      return null;
    }
    String text = value.strip();
    if (text.isEmpty()) {
      return null;
    }
    if (text.chars().allMatch(c -> c >= '0' && c <= '9')) {
      // A huge number of seconds is still a wait: the callers cap it.
      return text.length() > 9 ? Duration.ofSeconds(999_999_999L) : Duration.ofSeconds(Long.parseLong(text));
    }
    try {
      long at = ZonedDateTime.parse(text, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant().toEpochMilli();
      return Duration.ofMillis(Math.max(0, at - nowMillis));
    } catch (DateTimeParseException e) {
      return null;
    }
  }
}
