package io.github.robotsd.client;

import io.github.robotsd.client.model.Answer;
import io.github.robotsd.client.model.Rule;

/** A request robots.txt disallows, refused by {@link RobotsdFetcher}: nothing was fetched. */
public class DisallowedException extends RobotsdException {
  private static final long serialVersionUID = 1L;

  /** The URL refused. */
  private final String url;

  /** robotsd's answer. */
  private final transient Answer answer;

  /**
   * An exception for a disallowed URL.
   *
   * @param url the URL refused
   * @param answer robotsd's answer about it
   */
  public DisallowedException(String url, Answer answer) {
    super(message(url, answer));
    this.url = url;
    this.answer = answer;
  }

  private static String message(String url, Answer answer) {
    Rule rule = answer.rule();
    if (rule != null) {
      return "robotsd: " + url + " is disallowed by robots.txt line " + rule.line() + " ("
          + rule.directive() + ": " + rule.pattern() + ")";
    }
    return "robotsd: " + url + " is disallowed (" + answer.reason() + ")";
  }

  /**
   * The URL refused.
   *
   * @return the URL
   */
  public String url() {
    return url;
  }

  /**
   * robotsd's answer: the reason, and the rule and its line.
   *
   * @return the answer
   */
  public Answer answer() {
    return answer;
  }
}
