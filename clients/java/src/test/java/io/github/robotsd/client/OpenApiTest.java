package io.github.robotsd.client;

import static io.github.robotsd.client.TestRunner.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.github.robotsd.client.TestRunner.Cleanup;
import io.github.robotsd.client.TestRunner.Test;
import io.github.robotsd.client.model.*;
import java.io.File;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The hand-written records and robotsd's OpenAPI document cannot drift: every property of each
 * schema the client reads or sends is a record component (named by its {@code @JsonProperty}
 * where the Java name differs), and every
 * component is a property. A schema that is one of several objects has the properties of them
 * all; {@link Answer} is both the full answer and the verdict alone.
 */
final class OpenApiTest {
  static final Map<String, Class<?>> RECORDS = new LinkedHashMap<>();

  static {
    RECORDS.put("CheckResponse", Answer.class);
    RECORDS.put("CheckAnswer", Answer.class);
    RECORDS.put("AgentJson", Agent.class);
    RECORDS.put("RuleJson", Rule.class);
    RECORDS.put("GroupJson", Group.class);
    RECORDS.put("UsageJson", Usage.class);
    RECORDS.put("PreferenceJson", Preference.class);
    RECORDS.put("RslJson", RslTerms.class);
    RECORDS.put("RslContentJson", RslContent.class);
    RECORDS.put("RslLicenseJson", RslLicense.class);
    RECORDS.put("RslScopeJson", RslScope.class);
    RECORDS.put("RslPaymentJson", RslPayment.class);
    RECORDS.put("RslAmountJson", RslAmount.class);
    RECORDS.put("RslSourceJson", RslSource.class);
    RECORDS.put("RslBackoffJson", RslBackoff.class);
    RECORDS.put("BackoffJson", Backoff.class);
    RECORDS.put("RobotsSourceJson", Source.class);
    RECORDS.put("ChallengeJson", Challenge.class);
    RECORDS.put("PaceJson", Pace.class);
    RECORDS.put("SignJson", Sign.class);
    RECORDS.put("SignHeaders", SignHeaders.class);
    RECORDS.put("PaceStateJson", PaceState.class);
    RECORDS.put("ReportItem", Report.class);
    RECORDS.put("FeedbackItem", FeedbackResult.class);
    RECORDS.put("Problem", Problem.class);
    RECORDS.put("RobotsResponse", Robots.class);
    RECORDS.put("ParsedJson", Parsed.class);
    RECORDS.put("GroupDetailJson", GroupDetail.class);
    RECORDS.put("AgentLineJson", AgentLine.class);
    RECORDS.put("UsageLineJson", UsageLine.class);
    RECORDS.put("SitemapJson", Sitemap.class);
    RECORDS.put("LicenseJson", License.class);
    RECORDS.put("DiagnosticJson", Diagnostic.class);
    RECORDS.put("PageRequest", PageRequest.class);
    RECORDS.put("PageResponse", PageAnswer.class);
    RECORDS.put("PageRobotsJson", PageRobots.class);
    RECORDS.put("PageRuleJson", PageRule.class);
    RECORDS.put("PageUsageJson", PageUsage.class);
    RECORDS.put("ContentUsageHeaderJson", ContentUsageHeader.class);
    RECORDS.put("TdmJson", Tdm.class);
    RECORDS.put("WellKnownJson", WellKnown.class);
    RECORDS.put("CombinedJson", Combined.class);
  }

  private static TreeSet<String> properties(JsonNode schemas, JsonNode schema) {
    TreeSet<String> names = new TreeSet<>();
    schema.path("properties").fieldNames().forEachRemaining(names::add);
    for (JsonNode one : schema.path("oneOf")) {
      String ref = one.path("$ref").asText("");
      names.addAll(properties(schemas, ref.isEmpty() ? one : schemas.path(ref.substring(ref.lastIndexOf('/') + 1))));
    }
    return names;
  }

  @Test
  void theRecordsMatchTheOpenApiDocument(Cleanup c) throws Exception {
    File document = new File(System.getProperty("robotsd.openapi", "../../openapi/openapi.json"));
    JsonNode schemas = new ObjectMapper().readTree(document).path("components").path("schemas");
    List<String> drift = new ArrayList<>();
    for (Map.Entry<String, Class<?>> entry : RECORDS.entrySet()) {
      TreeSet<String> documented = properties(schemas, schemas.path(entry.getKey()));
      check(!documented.isEmpty(), entry.getKey() + ": no such schema with properties");
      TreeSet<String> components = new TreeSet<>();
      for (RecordComponent component : entry.getValue().getRecordComponents()) {
        JsonProperty named = component.getAccessor().getAnnotation(JsonProperty.class);
        components.add(named == null ? component.getName() : named.value());
      }
      if (!documented.equals(components)) {
        drift.add(entry.getKey() + ": OpenAPI has " + documented + ", " + entry.getValue().getSimpleName() + " has " + components);
      }
    }
    check(drift.isEmpty(), String.join("\n", drift));
    // Every record of the model is held to a schema.
    File model = new File("src/main/java/io/github/robotsd/client/model");
    for (String name : model.list()) {
      String type = name.replace(".java", "");
      check(type.equals("package-info") || RECORDS.values().stream().anyMatch(t -> t.getSimpleName().equals(type)),
          type + " is held to no schema");
    }
  }
}
