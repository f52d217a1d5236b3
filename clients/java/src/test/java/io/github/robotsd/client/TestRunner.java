package io.github.robotsd.client;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Deque;
import java.util.Objects;

/**
 * A test runner of its own: no test framework is needed to build or test the client offline.
 * Runs every {@link Test} method of the classes named on the command line, each with a fresh
 * {@link Cleanup}, and closes with "N passed, N failed". Exits 1 when any failed.
 */
public final class TestRunner {
  private TestRunner() {}

  /** Marks a test: a method taking a {@link Cleanup}. */
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.METHOD)
  public @interface Test {}

  /** What a test started, closed after it in reverse order (processes, servers). */
  public static final class Cleanup {
    private final Deque<AutoCloseable> closers = new ArrayDeque<>();

    /** Closes {@code closer} after the test. */
    public <T extends AutoCloseable> T add(T closer) {
      closers.push(closer);
      return closer;
    }

    void closeAll() {
      while (!closers.isEmpty()) {
        try {
          closers.pop().close();
        } catch (Exception e) {
          System.err.println("  cleanup: " + e);
        }
      }
    }
  }

  /** Fails the test with {@code message} unless {@code condition}. */
  public static void check(boolean condition, String message) {
    if (!condition) {
      throw new AssertionError(message);
    }
  }

  /** Fails the test unless {@code got} equals {@code want}. */
  public static void equal(Object got, Object want, String what) {
    if (!Objects.equals(got, want)) {
      throw new AssertionError(what + ": got " + got + ", want " + want);
    }
  }

  /** Runs the tests of the classes named, or only the methods named after a '#'. */
  public static void main(String[] args) throws Exception {
    int passed = 0;
    int failed = 0;
    for (String arg : args) {
      String[] parts = arg.split("#", 2);
      Class<?> type = Class.forName(parts[0]);
      Method[] methods = type.getDeclaredMethods();
      Arrays.sort(methods, Comparator.comparing(Method::getName));
      for (Method method : methods) {
        if (!method.isAnnotationPresent(Test.class) || parts.length == 2 && !parts[1].equals(method.getName())) {
          continue;
        }
        String name = type.getSimpleName() + "." + method.getName();
        Cleanup cleanup = new Cleanup();
        long started = System.nanoTime();
        try {
          method.setAccessible(true);
          method.invoke(type.getDeclaredConstructor().newInstance(), cleanup);
          passed++;
          System.out.printf("ok   %s (%.1f s)%n", name, (System.nanoTime() - started) / 1e9);
        } catch (InvocationTargetException e) {
          failed++;
          System.out.printf("FAIL %s (%.1f s)%n", name, (System.nanoTime() - started) / 1e9);
          e.getCause().printStackTrace(System.out);
        } finally {
          cleanup.closeAll();
        }
      }
    }
    System.out.println();
    System.out.println(passed + " passed, " + failed + " failed");
    System.exit(failed == 0 && passed > 0 ? 0 : 1);
  }
}
