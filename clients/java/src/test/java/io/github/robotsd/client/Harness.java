package io.github.robotsd.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/** robotsd and loopback sites for the tests: all traffic stays on 127.0.0.1. */
final class Harness {
  private Harness() {}

  /** A page handler of a test site. */
  interface Page {
    void serve(HttpExchange exchange) throws IOException;
  }

  /** A free loopback port. */
  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  /**
   * Runs the robotsd binary ROBOTSD_BIN names on a free loopback port, allowed to fetch loopback
   * origins (--allow-private-networks, as the other clients' tests). A missing binary fails the
   * test: it is never skipped.
   */
  static RobotsdClient robotsd(TestRunner.Cleanup cleanup, String... args) throws Exception {
    String bin = System.getenv("ROBOTSD_BIN");
    if (bin == null || bin.isEmpty()) {
      throw new AssertionError("ROBOTSD_BIN must name a robotsd binary (cargo build --release; "
          + ".ci/client-java-checks.sh sets it)");
    }
    String addr = "127.0.0.1:" + freePort();
    List<String> command = new ArrayList<>(List.of(bin, "--allow-private-networks", "--listen", addr,
        "--operator-contact", "mailto:tests@robotsd.invalid", "--log-level", "warn"));
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    cleanup.add(() -> {
      process.destroyForcibly();
      process.waitFor();
    });
    HttpClient http = HttpClient.newHttpClient();
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    for (;;) {
      try {
        HttpResponse<Void> ready = http.send(
            HttpRequest.newBuilder(URI.create("http://" + addr + "/readyz")).build(),
            HttpResponse.BodyHandlers.discarding());
        if (ready.statusCode() == 200) {
          return RobotsdClient.create("http://" + addr);
        }
      } catch (IOException e) {
        // Not listening yet.
      }
      if (System.nanoTime() > deadline || !process.isAlive()) {
        throw new AssertionError("robotsd did not become ready on " + addr);
      }
      Thread.sleep(50);
    }
  }

  /** A loopback site: robots.txt, pages of its own, and a log of the page fetches. */
  static final class Site implements AutoCloseable {
    final HttpServer server;
    final String url;
    final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();
    /** When each page fetch arrived (nanoTime) and its path, in arrival order. */
    final List<long[]> arrivals = new ArrayList<>();
    final List<String> arrivalPaths = new ArrayList<>();
    /** The robots.txt served, which a test may change; null: a 404. */
    volatile String robots;

    Site(String robots, Map<String, Page> pages) throws IOException {
      this.robots = robots;
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
      server.setExecutor(Executors.newCachedThreadPool());
      server.createContext("/", exchange -> {
        long at = System.nanoTime();
        String path = exchange.getRequestURI().getPath();
        hits.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
        try (exchange) {
          if (path.equals("/robots.txt")) {
            String file = this.robots;
            if (file == null) {
              send(exchange, 404, "text/plain", "no robots.txt");
            } else {
              send(exchange, 200, "text/plain", file);
            }
            return;
          }
          synchronized (arrivals) {
            arrivals.add(new long[] {at});
            arrivalPaths.add(path);
          }
          Page page = pages.get(path);
          if (page != null) {
            page.serve(exchange);
          } else {
            send(exchange, 200, "text/html; charset=utf-8", "<html><body>page " + path + "</body></html>");
          }
        }
      });
      server.start();
      url = "http://127.0.0.1:" + server.getAddress().getPort();
    }

    int hits(String path) {
      AtomicInteger n = hits.get(path);
      return n == null ? 0 : n.get();
    }

    /** The paths fetched, robots.txt apart, sorted. */
    List<String> pages() {
      return hits.keySet().stream().filter(p -> !p.equals("/robots.txt")).sorted().toList();
    }

    /** The shortest time between two consecutive page fetches, in ms. */
    double closestGapMs() {
      List<Long> times = new ArrayList<>();
      synchronized (arrivals) {
        for (long[] a : arrivals) {
          times.add(a[0]);
        }
      }
      times.sort(null);
      double closest = Double.MAX_VALUE;
      for (int i = 1; i < times.size(); i++) {
        closest = Math.min(closest, (times.get(i) - times.get(i - 1)) / 1e6);
      }
      return closest;
    }

    int fetches() {
      synchronized (arrivals) {
        return arrivals.size();
      }
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }

  static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
    byte[] data = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", type);
    exchange.sendResponseHeaders(status, data.length == 0 ? -1 : data.length);
    if (data.length > 0) {
      exchange.getResponseBody().write(data);
    }
  }

  /** The 51 paths of the test site, as the other clients' tests and clients/e2e have them. */
  static List<String> sitePaths() {
    List<String> paths = new ArrayList<>(List.of("/"));
    for (int i = 0; i < 30; i++) {
      paths.add("/p/" + i);
    }
    for (int i = 0; i < 10; i++) {
      paths.add("/private/" + i);
    }
    for (int i = 0; i < 5; i++) {
      paths.add("/private/public/" + i);
      paths.add("/docs/" + i + ".pdf");
    }
    return paths;
  }

  /** The test site's robots.txt: allow, disallow, a wildcard, an anchor and a crawl-delay. */
  static final String SITE_ROBOTS = "User-agent: *\nDisallow: /private/\nAllow: /private/public\n"
      + "Disallow: /*.pdf$\nCrawl-delay: 0.01\nSitemap: http://127.0.0.1/sitemap.xml\n\n"
      + "User-agent: OtherBot\nDisallow: /\n";

  /** The 51-page site: the index links to the 50 others. */
  static Site site51(TestRunner.Cleanup cleanup) throws IOException {
    StringBuilder index = new StringBuilder("<html><body>");
    for (String p : sitePaths().subList(1, sitePaths().size())) {
      index.append("<a href=\"").append(p).append("\">").append(p).append("</a>\n");
    }
    String body = index.append("</body></html>").toString();
    Map<String, Page> pages = new TreeMap<>();
    pages.put("/", e -> send(e, 200, "text/html; charset=utf-8", body));
    return cleanup.add(new Site(SITE_ROBOTS, pages));
  }
}
