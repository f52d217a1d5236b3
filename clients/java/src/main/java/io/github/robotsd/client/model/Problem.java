package io.github.robotsd.client.model;

/**
 * An RFC 9457 problem ({@code application/problem+json}), as robotsd answers errors and as it
 * fills a failed batch item's slot.
 *
 * @param type its stable type, such as {@code urn:robotsd:problem:unsupported-scheme}
 * @param title a short summary
 * @param status the HTTP status
 * @param detail what was wrong
 * @param parameter which input the problem is about, when robotsd says
 */
public record Problem(String type, String title, int status, String detail, String parameter) {}
