package io.github.robotsd.client.model;

/**
 * The Web Bot Auth signature robotsd made for exactly one request ({@code SignJson}): asked with
 * {@code sign=GET} (or {@code HEAD}) and given for an allowed URL only, never for a disallowed
 * one or a deferred pacing slot. Send {@code method} to {@code url} as it is (its path and
 * query exactly) with the three {@code headers}, before {@code expires}: the signature covers
 * the method, the authority, the path, the query and the {@code Signature-Agent} member, so
 * another request fails verification at the site.
 *
 * @param method the method it was made for: {@code GET} or {@code HEAD}
 * @param url the URL it was made for (WHATWG-parsed, without a fragment), as the request must
 *     be sent
 * @param headers the headers to send with it
 * @param keyid the signing key's id, its JWK SHA-256 thumbprint, listed in the key directory
 * @param created when it was made (RFC 3339)
 * @param expires until when it holds (RFC 3339): a lifetime from now, or from a reserved pacing
 *     slot's {@code not_before}
 */
public record Sign(String method, String url, SignHeaders headers, String keyid, String created, String expires) {}
