// perfgym: the end mark of a PerfCodeBench Go harness run (docs/security.md, section 6b). The
// harness's own main is renamed perfgymHarnessMain; this main runs it and, when it returned,
// writes "PERFGYM_HARNESS_END <nonce> <state>" to the original stdout. The nonce is read (its
// file removed) by the first package-level initialiser (this file sorts first), before any of
// the solution's initialisers run; only main.main can have the mark written, once.

package main

import (
	"os"
	"runtime"
	"strings"
	"syscall"
)

var perfgymEnd = perfgymArm()

func perfgymArm() func() {
	const path = "/tmp/.perfgym-nonce"
	data, _ := os.ReadFile(path)
	os.Remove(path)
	nonce := strings.TrimSpace(string(data))
	var before syscall.Stat_t
	saved, err := syscall.Dup(1)
	if err == nil {
		syscall.CloseOnExec(saved)
		err = syscall.Fstat(1, &before)
	}
	stdout := os.Stdout
	used := false
	return func() {
		pc, _, _, ok := runtime.Caller(1)
		if used || !ok || err != nil || nonce == "" {
			return
		}
		if f := runtime.FuncForPC(pc); f == nil || f.Name() != "main.main" {
			return
		}
		used = true
		var now syscall.Stat_t
		state := "ok"
		if os.Stdout != stdout || syscall.Fstat(1, &now) != nil || now.Dev != before.Dev ||
			now.Ino != before.Ino {
			state = "stdout-replaced"
		}
		syscall.Write(saved, []byte("\nPERFGYM_HARNESS_END "+nonce+" "+state+"\n"))
	}
}

func main() {
	perfgymHarnessMain()
	perfgymEnd()
}
