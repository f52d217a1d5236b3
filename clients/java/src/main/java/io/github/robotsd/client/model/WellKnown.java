package io.github.robotsd.client.model;

/**
 * The origin's {@code /.well-known/tdmrep.json}, for the page's URL ({@code WellKnownJson}).
 *
 * @param url the file's URL
 * @param state {@code rule}, {@code no_rule}, {@code missing}, {@code invalid},
 *     {@code fetch_failed} or {@code refused}
 * @param rule the covering rule's position in the file's array, from 0
 * @param reason why there is no rule, when the file could not be used
 */
public record WellKnown(String url, String state, Integer rule, String reason) {}
