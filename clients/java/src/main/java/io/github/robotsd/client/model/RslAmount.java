package io.github.robotsd.client.model;

/**
 * An RSL {@code <amount>}.
 *
 * @param value the amount as written
 * @param currency its ISO 4217 currency
 */
public record RslAmount(String value, String currency) {}
