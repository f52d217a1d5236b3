package io.github.robotsd.client.model;

import java.util.List;

/**
 * An RSL {@code <content>} element.
 *
 * @param url its URL pattern
 * @param line its line in the document
 * @param server its license server, when a license must be obtained first
 * @param encrypted whether the content is encrypted
 * @param lastmod its last modification, as written
 * @param licenses the licenses it offers
 */
public record RslContent(
    String url, int line, String server, boolean encrypted, String lastmod, List<RslLicense> licenses) {}
