package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The headers a signed request carries ({@code SignHeaders}), to send as they are.
 *
 * @param signatureAgent {@code Signature-Agent}: the fleet's key directory, as the dictionary
 *     member the signature covers
 * @param signatureInput {@code Signature-Input}: what the signature covers, when it was made,
 *     until when it holds, the key's id, a nonce and {@code tag="web-bot-auth"}
 * @param signature {@code Signature}: the Ed25519 signature
 */
public record SignHeaders(
    @JsonProperty("Signature-Agent") String signatureAgent,
    @JsonProperty("Signature-Input") String signatureInput,
    @JsonProperty("Signature") String signature) {

  /**
   * The three headers by name, in the order robotsd gives them, to set on the request.
   *
   * @return {@code Signature-Agent}, {@code Signature-Input} and {@code Signature}
   */
  public Map<String, String> asMap() {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put("Signature-Agent", signatureAgent);
    headers.put("Signature-Input", signatureInput);
    headers.put("Signature", signature);
    return headers;
  }
}
