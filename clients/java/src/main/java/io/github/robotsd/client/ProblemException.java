package io.github.robotsd.client;

import io.github.robotsd.client.model.Problem;

/**
 * robotsd answered with an RFC 9457 problem ({@code application/problem+json}). An answer that
 * was not problem+json (a proxy's error page) is given as a problem of type {@code about:blank}
 * with the body in {@code detail}.
 */
public class ProblemException extends RobotsdException {
  private static final long serialVersionUID = 1L;

  /**
   * A signature was asked of a robotsd that has no keys ({@code --wba-keys}): a configuration
   * error, never a reason to send a request unsigned.
   */
  public static final String SIGNING_OFF = "urn:robotsd:problem:signing-off";

  /**
   * A signature was asked for an agent that does not name robotsd's {@code --wba-product-token}:
   * a configuration error, never a reason to send a request unsigned.
   */
  public static final String SIGN_OTHER_AGENT = "urn:robotsd:problem:sign-other-agent";

  /** The problem, as robotsd answered it. */
  private final transient Problem problem;

  /** The {@code X-Request-Id} robotsd answered with, or null. */
  private final String requestId;

  /**
   * An exception for a problem robotsd answered with.
   *
   * @param problem the problem
   * @param requestId the {@code X-Request-Id} of robotsd's answer, or null
   */
  public ProblemException(Problem problem, String requestId) {
    super("robotsd: " + problem.title() + " (" + problem.status() + "): " + problem.detail()
        + (requestId == null ? "" : " [request " + requestId + "]"));
    this.problem = problem;
    this.requestId = requestId;
  }

  /**
   * The problem, as robotsd answered it.
   *
   * @return the problem
   */
  public Problem problem() {
    return problem;
  }

  /**
   * The problem's stable type, such as {@code urn:robotsd:problem:unsupported-scheme}.
   *
   * @return the type
   */
  public String type() {
    return problem.type();
  }

  /**
   * A short summary of the problem.
   *
   * @return the title
   */
  public String title() {
    return problem.title();
  }

  /**
   * The HTTP status robotsd answered with.
   *
   * @return the status
   */
  public int status() {
    return problem.status();
  }

  /**
   * What was wrong.
   *
   * @return the detail
   */
  public String detail() {
    return problem.detail();
  }

  /**
   * Which input the problem is about, when robotsd says.
   *
   * @return the parameter, or null
   */
  public String parameter() {
    return problem.parameter();
  }

  /**
   * The request id robotsd logged the request under ({@code X-Request-Id}): the caller's own
   * when it sent one ({@link RobotsdClient#withRequestId}), else robotsd's.
   *
   * @return the request id, or null when the answer had none
   */
  public String requestId() {
    return requestId;
  }
}
