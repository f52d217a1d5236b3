package io.github.robotsd.client;

/**
 * The base of every exception this library throws about robotsd. Unchecked, so that a crawler
 * framework's interfaces (a rules object's {@code isAllowed}, a filter) can pass it on.
 */
public class RobotsdException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * An exception with a message.
   *
   * @param message what happened
   */
  public RobotsdException(String message) {
    super(message);
  }

  /**
   * An exception with a message and its cause.
   *
   * @param message what happened
   * @param cause what caused it
   */
  public RobotsdException(String message, Throwable cause) {
    super(message, cause);
  }
}
