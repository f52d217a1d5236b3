package io.github.robotsd.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The loopback site of tests/wba/verifying_site.py, run as a program with ROBOTSD_WBA_PYTHON: it
 * verifies every signature it receives with PyPI's http-message-signatures, which shares no code
 * with robotsd or this client, and logs each request as a line of JSON (method, path, verified,
 * kid, reason). It knows the fleet's keys from the directory of a robotsd started with {@link
 * #KEYED}.
 */
final class VerifyingSite implements AutoCloseable {
  /** The fleet's key directory, as robotsd sends it in Signature-Agent. */
  static final String DIRECTORY_URL = "https://bot.example/.well-known/http-message-signatures-directory";

  /** The checkout's root: the tests run in clients/java. */
  static final File REPO = new File("../..").getAbsoluteFile().toPath().normalize().toFile();

  /** robotsd's arguments signing with the committed test key (RFC 9421's B.1.4, never deployed). */
  static final List<String> KEYED = List.of(
      "--wba-keys", new File(REPO, "tests/wba/test-keys.json").getPath(), "--wba-agent", DIRECTORY_URL);

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Process process;
  private final List<JsonNode> log = new ArrayList<>();
  private final List<Path> files = new ArrayList<>();
  final String url;

  /**
   * Starts the site: {@code robots} is its robots.txt, {@code pages} what it serves to verified
   * requests (a path with its query to HTML, or to {@code Map.of("redirect", "/x")}).
   */
  VerifyingSite(RobotsdClient keyed, String robots, Map<String, Object> pages) throws Exception {
    String python = System.getenv("ROBOTSD_WBA_PYTHON");
    if (python == null || python.isEmpty()) {
      throw new AssertionError("ROBOTSD_WBA_PYTHON must name a Python with PyPI's http-message-signatures"
          + " (.ci/wba-requirements.txt; .ci/client-checks.sh exports it): the signing tests need the verifying site");
    }
    Path robotsFile = Files.createTempFile("robotsd-wba-robots", ".txt");
    files.add(robotsFile);
    Files.writeString(robotsFile, robots);
    Path pagesFile = Files.createTempFile("robotsd-wba-pages", ".json");
    files.add(pagesFile);
    Files.write(pagesFile, JSON.writeValueAsBytes(pages));
    process = new ProcessBuilder(python, new File(REPO, "tests/wba/verifying_site.py").getPath(),
        "--directory-url", DIRECTORY_URL,
        "--fetch-from", keyed.baseUrl() + "/.well-known/http-message-signatures-directory",
        "--robots", robotsFile.toString(), "--pages", pagesFile.toString())
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    CompletableFuture<Integer> port = new CompletableFuture<>();
    Thread reader = new Thread(() -> read(port), "verifying-site-log");
    reader.setDaemon(true);
    reader.start();
    try {
      url = "http://127.0.0.1:" + port.get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      close();
      throw new AssertionError("the verifying site did not start", e);
    }
  }

  private void read(CompletableFuture<Integer> port) {
    try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = out.readLine()) != null; ) {
        if (!port.isDone()) {
          if (line.startsWith("listening ")) {
            port.complete(Integer.parseInt(line.substring("listening ".length()).strip()));
          }
          continue;
        }
        JsonNode entry = JSON.readTree(line);
        synchronized (log) {
          log.add(entry);
          log.notifyAll();
        }
      }
    } catch (IOException | RuntimeException e) {
      port.completeExceptionally(e);
    }
    port.completeExceptionally(new IOException("the verifying site exited"));
  }

  String url(String path) {
    return url + path;
  }

  /** The requests logged so far, robots.txt's too. */
  List<JsonNode> requests() {
    synchronized (log) {
      return new ArrayList<>(log);
    }
  }

  /** The requests for {@code path} (with its query) logged so far. */
  List<JsonNode> requests(String path) {
    return requests().stream().filter(e -> path.equals(e.path("path").asText(null))).toList();
  }

  /**
   * Waits for the site to have logged {@code count} {@code method} requests for {@code path} and
   * returns them: a line is written before its answer is sent, and read here a moment later.
   */
  List<JsonNode> awaitRequests(String method, String path, int count) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    synchronized (log) {
      for (;;) {
        List<JsonNode> seen = log.stream()
            .filter(e -> method.equals(e.path("method").asText(null)) && path.equals(e.path("path").asText(null)))
            .toList();
        if (seen.size() >= count) {
          return seen;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError("the site logged " + seen.size() + " " + method + " " + path + ", not " + count + ": " + log);
        }
        log.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
      }
    }
  }

  @Override
  public void close() throws IOException {
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    for (Path file : files) {
      Files.deleteIfExists(file);
    }
  }
}
