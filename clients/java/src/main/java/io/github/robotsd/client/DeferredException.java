package io.github.robotsd.client;

import io.github.robotsd.client.model.Answer;

/**
 * A request whose fetch slot robotsd deferred for longer than {@link RobotsdFetcher}'s
 * {@code maxPaceWait}: nothing was reserved and nothing fetched. Requeue the URL; {@code
 * answer().pace().notBefore()} says when to ask again.
 */
public class DeferredException extends RobotsdException {
  private static final long serialVersionUID = 1L;

  /** The URL not fetched. */
  private final String url;

  /** robotsd's last answer. */
  private final transient Answer answer;

  /**
   * An exception for a slot deferred too long.
   *
   * @param url the URL not fetched
   * @param answer robotsd's last answer about it, with its deferred pace
   */
  public DeferredException(String url, Answer answer) {
    super("robotsd: no fetch slot for " + url + " soon enough: ask again at "
        + (answer.pace() == null ? "?" : answer.pace().notBefore()));
    this.url = url;
    this.answer = answer;
  }

  /**
   * The URL not fetched.
   *
   * @return the URL
   */
  public String url() {
    return url;
  }

  /**
   * robotsd's last answer about it.
   *
   * @return the answer
   */
  public Answer answer() {
    return answer;
  }
}
