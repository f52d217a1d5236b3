package io.github.robotsd.client.model;

/**
 * An RSL {@code <license>}.
 *
 * @param permits what it permits
 * @param prohibits what it prohibits
 * @param payment its payment; null: free
 */
public record RslLicense(RslScope permits, RslScope prohibits, RslPayment payment) {}
