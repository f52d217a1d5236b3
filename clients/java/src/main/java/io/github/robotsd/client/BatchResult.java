package io.github.robotsd.client;

import io.github.robotsd.client.model.Answer;
import io.github.robotsd.client.model.Problem;

/**
 * One result of a batch: an answer, or the problem with that item (the rest of the batch is
 * unaffected). The answer is in full, or the verdict alone ({@link Answer#full()} false) for a
 * batch asked with {@code view=verdict} and for the items past the bound of a batch's answer.
 *
 * @param answer the answer; null when the item has a problem
 * @param problem the problem with the item; null when it has an answer
 */
public record BatchResult(Answer answer, Problem problem) {

  /**
   * Whether the item has a problem rather than an answer.
   *
   * @return true for a problem
   */
  public boolean isProblem() {
    return problem != null;
  }
}
