package io.github.robotsd.client.model;

/**
 * One report's effect ({@code FeedbackItem}): the origin and its pacing state after the report,
 * or the problem with that report (the others are taken).
 *
 * @param origin the report's origin
 * @param applied false when robotsd holds nothing of the origin: the report changed nothing
 * @param pace the origin's pacing state after the report
 * @param error the problem with the report; null when it was taken
 */
public record FeedbackResult(String origin, Boolean applied, PaceState pace, Problem error) {

  /**
   * Whether robotsd took the report.
   *
   * @return true unless the report has a problem
   */
  public boolean taken() {
    return error == null;
  }
}
