package io.github.robotsd.client;

/**
 * robotsd could not be asked: no connection, a broken one, no answer within the call's
 * deadline, or the calling thread was interrupted (its interrupt status is then set again).
 */
public class UnavailableException extends RobotsdException {
  private static final long serialVersionUID = 1L;

  /**
   * An exception for a call that got no answer.
   *
   * @param message what happened
   * @param cause what caused it
   */
  public UnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
