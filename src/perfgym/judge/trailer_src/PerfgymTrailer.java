// perfgym: runs a PerfCodeBench Java harness (args[0]: its main class, the rest its arguments)
// and, only when its main returned normally, writes "PERFGYM_HARNESS_END <nonce> <state>" to
// stdout (docs/security.md, section 6b). The nonce is read, and its file removed, before the
// harness class (and so the solution) is loaded. The mark is written by a shutdown hook when
// the harness's main returned, or when the harness's own main called System.exit.
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;

public final class PerfgymTrailer {
  private PerfgymTrailer() {}

  private static String link(String path) {
    try {
      return Files.readSymbolicLink(Paths.get(path)).toString();
    } catch (IOException | UnsupportedOperationException e) {
      return "?";
    }
  }

  /** The harness called System.exit itself: its main class's main is just below it. */
  private static boolean exitedByHarness(String harness) {
    for (StackTraceElement[] stack : Thread.getAllStackTraces().values()) {
      for (int k = 0; k + 1 < stack.length; k++) {
        StackTraceElement e = stack[k];
        if (e.getClassName().equals("java.lang.System") && e.getMethodName().equals("exit")) {
          StackTraceElement caller = stack[k + 1];
          return caller.getClassName().equals(harness) && caller.getMethodName().equals("main");
        }
      }
    }
    return false;
  }

  public static void main(String[] args) throws Throwable {
    Path file = Paths.get("/tmp/.perfgym-nonce");
    String read;
    try {
      read = new String(Files.readAllBytes(file), StandardCharsets.US_ASCII).trim();
      Files.deleteIfExists(file);
    } catch (IOException e) {
      read = "";
    }
    final String nonce = read;
    final String fd1 = link("/proc/self/fd/1");
    final PrintStream out = System.out;
    final AtomicBoolean returned = new AtomicBoolean(false);
    final String harness = args[0];
    Thread mark = new Thread(() -> {
      if (nonce.isEmpty() || !(returned.get() || exitedByHarness(harness))) {
        return;
      }
      boolean same = System.out == out && fd1.equals(link("/proc/self/fd/1"));
      out.flush();
      String state = same ? "ok" : "stdout-replaced";
      try {
        FileOutputStream raw = new FileOutputStream(FileDescriptor.out);
        raw.write(("\nPERFGYM_HARNESS_END " + nonce + " " + state + "\n")
            .getBytes(StandardCharsets.US_ASCII));
        raw.flush();
      } catch (IOException e) {
        // no mark: the run fails
      }
    });
    Runtime.getRuntime().addShutdownHook(mark);
    try {
      Class.forName(harness)
          .getMethod("main", String[].class)
          .invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
    returned.set(true);
  }
}
