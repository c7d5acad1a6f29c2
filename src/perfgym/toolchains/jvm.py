"""The Java recipe and the JVM flags that keep it well-behaved in a memory-limited sandbox."""

from __future__ import annotations

from perfgym.tasks.task import Language
from perfgym.toolchains.recipe import ARTIFACT, Recipe

#: Flags of every Java run, and why:
#: -Xss64m             deep recursion in competitive-style programs (the java launcher runs
#:                     main() on a new thread created with this stack size).
#: -XX:+UseSerialGC    one GC thread and the smallest footprint: no GC threads scaled to the
#:                     host's core count (they would count against max_processes), and less
#:                     timing noise from concurrent collection.
#: -XX:CICompilerCount=2  the JIT's thread count is otherwise scaled to the host's cores too.
#: -XX:MaxRAMPercentage=75  without an explicit -Xmx the JVM sizes its heap at 25% of the
#:                     cgroup limit it detects; 75% lets programs use the memory they are given.
#: -XX:-UsePerfData    no hsperfdata mmap file in the run's /tmp (it counts against the disk cap).
#: When the caller passes the run's Limits, -Xmx<75% of memory_mb> is added and wins over the
#: percentage, so a program that needs too much gets java.lang.OutOfMemoryError (a runtime
#: error) at the same size on every host, whether memory is enforced by a cgroup or a monitor.
JVM_FLAGS = (
    "-Xss64m",
    "-XX:+UseSerialGC",
    "-XX:CICompilerCount=2",
    "-XX:MaxRAMPercentage=75",
    "-XX:-UsePerfData",
)

JAVA = Recipe(
    name="java-javac",
    language=Language.JAVA,
    source_name="Main.java",
    compiler="javac",
    version_args=("-version",),
    build=("javac", "Main.java"),
    # Main.class must exist (the entry point); nested and extra top-level classes come along.
    outputs=("Main.class", "*.class"),
    runtime="java",
    runtime_version_args=("-version",),
    run=("java", *JVM_FLAGS, "-cp", ARTIFACT, "Main"),
    memory_flag="-Xmx{mb}m",
)
