// perfgym: runs a PerfCodeBench Java harness (args[0]: its main class, the rest its arguments)
// and writes "PERFGYM_HARNESS_END <nonce> <state>" to stdout only when the harness's main
// returned, or the harness's own main called System.exit (docs/security.md, section 6b). The
// nonce is read, and its file removed, before the harness class (and so the solution) is
// loaded. java.io only, no lambda and no string `+` (an invokedynamic each): they would cost
// the JVM's start-up ~100 ms of class loading.
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;

public final class PerfgymTrailer extends Thread {
  private final String nonce;
  private final String harness;
  private final String fd1;
  private final PrintStream out;
  private volatile boolean returned;

  private PerfgymTrailer(String nonce, String harness) {
    this.nonce = nonce;
    this.harness = harness;
    this.fd1 = link();
    this.out = System.out;
  }

  private static String link() {
    try {
      return new File("/proc/self/fd/1").getCanonicalPath();
    } catch (IOException e) {
      return "?";
    }
  }

  private static String readNonce() {
    File file = new File("/tmp/.perfgym-nonce");
    byte[] buf = new byte[80];
    int n = 0;
    try (FileInputStream in = new FileInputStream(file)) {
      for (int r; n < buf.length && (r = in.read(buf, n, buf.length - n)) > 0; ) {
        n += r;
      }
    } catch (IOException e) {
      n = 0;
    }
    file.delete();
    return new String(buf, 0, n, java.nio.charset.StandardCharsets.US_ASCII).trim();
  }

  /**
   * The harness called System.exit itself: just below exit, its main class's main, defined by
   * the application class loader; below that only java.base's reflection frames, down to this
   * class's main at the bottom of the thread. A class of the harness's name defined by the
   * program's own loader fails the loader test; called from the program (whatever its loader's
   * name), the program's and the real harness's frames sit between it and the bottom.
   */
  private boolean exitedByHarness() {
    for (StackTraceElement[] stack : Thread.getAllStackTraces().values()) {
      for (int k = 0; k + 1 < stack.length; k++) {
        StackTraceElement e = stack[k];
        if (e.getClassName().equals("java.lang.System") && e.getMethodName().equals("exit")) {
          return fromHarnessMain(stack, k + 1);
        }
      }
    }
    return false;
  }

  private boolean fromHarnessMain(StackTraceElement[] stack, int at) {
    StackTraceElement caller = stack[at];
    if (!isApp(caller, harness, "main")) {
      return false;
    }
    int last = stack.length - 1;
    for (int k = at + 1; k < last; k++) {
      String name = stack[k].getClassName();
      boolean reflection = name.startsWith("jdk.internal.reflect.")
          || name.startsWith("java.lang.reflect.");
      if (!reflection || !"java.base".equals(stack[k].getModuleName())) {
        return false;
      }
    }
    return last > at && isApp(stack[last], "PerfgymTrailer", "main");
  }

  private static boolean isApp(StackTraceElement e, String cls, String method) {
    return e.getClassName().equals(cls) && e.getMethodName().equals(method)
        && "app".equals(e.getClassLoaderName()) && e.getModuleName() == null;
  }

  @Override
  public void run() {
    if (nonce.isEmpty() || !(returned || exitedByHarness())) {
      return;
    }
    boolean same = System.out == out && fd1.equals(link());
    out.flush();
    String state = same ? "ok" : "stdout-replaced";
    try {
      FileOutputStream raw = new FileOutputStream(FileDescriptor.out);
      StringBuilder line = new StringBuilder("\nPERFGYM_HARNESS_END ");
      line.append(nonce).append(' ').append(state).append('\n');
      raw.write(line.toString().getBytes("US-ASCII"));
      raw.flush();
    } catch (IOException e) {
      // no mark: the run fails
    }
  }

  public static void main(String[] args) throws Throwable {
    PerfgymTrailer mark = new PerfgymTrailer(readNonce(), args[0]);
    Runtime.getRuntime().addShutdownHook(mark);
    String[] rest = new String[args.length - 1];
    System.arraycopy(args, 1, rest, 0, rest.length);
    try {
      Class.forName(args[0]).getMethod("main", String[].class).invoke(null, (Object) rest);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
    mark.returned = true;
  }
}
