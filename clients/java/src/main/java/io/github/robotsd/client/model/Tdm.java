package io.github.robotsd.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/**
 * W3C TDMRep: whether text and data mining rights are reserved ({@code TdmJson}).
 *
 * @param reservation true: reserved, false: not reserved, null: unset
 * @param source {@code well_known}, {@code header} or {@code meta}; null when unset
 * @param policy the TDM policy's URL, only with a reservation
 * @param policySource where the policy came from
 * @param invalid the layers that gave a tdm-reservation other than 0 or 1
 * @param wellKnown what the origin's tdmrep.json says of the URL; null unless robotsd reads it
 */
public record Tdm(
    Boolean reservation,
    String source,
    String policy,
    @JsonProperty("policy_source") String policySource,
    List<String> invalid,
    @JsonProperty("well_known") WellKnown wellKnown) {}
