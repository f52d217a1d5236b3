package io.github.robotsd.client.model;

import java.util.List;

/**
 * An RSL {@code <payment>}.
 *
 * @param type its type as written; null when the element has none
 * @param amounts its amounts
 * @param standard its standard license URL
 * @param custom its custom license URL
 */
public record RslPayment(String type, List<RslAmount> amounts, String standard, String custom) {}
