package io.github.robotsd.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;

/**
 * A loopback stand-in in front of the real robotsd: it passes every call through, and logs it,
 * until a test has it answer otherwise. So a test sees robotsd's own verdicts, how many calls a
 * client made, and what the client does when robotsd is down, overloaded or behind a proxy.
 */
final class Gate implements AutoCloseable {
  /** What the gate does with a call. */
  enum Mode {
    /** Passes it to robotsd. */
    PASS,
    /** Closes the connection without an answer: robotsd down, as the client sees it. */
    DOWN,
    /** robotsd's own 503 ({@code overloaded}, {@code Retry-After: 0}). */
    OVERLOADED,
    /** A proxy's HTML 503. */
    PROXY_503,
  }

  private final HttpServer server;
  private final HttpClient http = HttpClient.newBuilder().proxy(HttpClient.Builder.NO_PROXY).build();
  private final String robotsd;
  /** Each call, as "METHOD /path", in arrival order. */
  final List<String> calls = new CopyOnWriteArrayList<>();
  volatile Mode mode = Mode.PASS;
  final String url;

  Gate(RobotsdClient robotsd) throws IOException {
    this.robotsd = robotsd.baseUrl();
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext("/", this::serve);
    server.start();
    url = "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** A client of robotsd through the gate. */
  RobotsdClient client() {
    return RobotsdClient.create(url);
  }

  /** The calls of {@code method} to {@code path} so far. */
  long count(String method, String path) {
    return calls.stream().filter((method + " " + path)::equals).count();
  }

  private void serve(HttpExchange exchange) throws IOException {
    calls.add(exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath());
    Mode now = mode;
    if (now == Mode.DOWN) {
      exchange.close();
      return;
    }
    try (exchange) {
      if (now == Mode.OVERLOADED) {
        RetryTest.overloaded(exchange);
        return;
      }
      if (now == Mode.PROXY_503) {
        RetryTest.proxyPage(exchange);
        return;
      }
      byte[] body = exchange.getRequestBody().readAllBytes();
      HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(robotsd + exchange.getRequestURI()))
          .method(exchange.getRequestMethod(), body.length == 0
              ? HttpRequest.BodyPublishers.noBody()
              : HttpRequest.BodyPublishers.ofByteArray(body));
      String type = exchange.getRequestHeaders().getFirst("Content-Type");
      if (type != null) {
        request.header("Content-Type", type);
      }
      HttpResponse<byte[]> response;
      try {
        response = http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException(e);
      }
      for (String name : List.of("content-type", "retry-after", "x-request-id")) {
        response.headers().firstValue(name).ifPresent(v -> exchange.getResponseHeaders().set(name, v));
      }
      byte[] out = response.body();
      exchange.sendResponseHeaders(response.statusCode(), out.length == 0 ? -1 : out.length);
      if (out.length > 0) {
        exchange.getResponseBody().write(out);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
