package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// commandPeak prepares the command name args so that its peak resident set can be read once
// it ran: peak returns it in bytes, 0 when unknown.
//
// The driver starts a child by sharing its own address space with it until the child
// executes, and Linux then counts the driver's peak resident set in the child's (ru_maxrss):
// a child's peakRSS is never below the driver's. GNU time, where installed, starts the
// command from its own small process and reports the command's peak alone; exact says
// whether it does. Without it peak is peakRSS's figure.
func commandPeak(dir, name string, args ...string) (cmd *exec.Cmd, peak func() int64, exact bool) {
	if t := gnuTime(); t != "" {
		out := filepath.Join(dir, "peak-rss")
		cmd = exec.Command(t, append([]string{"-f", "%M", "-o", out, name}, args...)...)
		return cmd, func() int64 {
			b, err := os.ReadFile(out)
			if err != nil {
				return 0
			}
			// The last line is %M, in KiB (a failed command's status line comes before it).
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			kib, err := strconv.ParseInt(strings.TrimSpace(lines[len(lines)-1]), 10, 64)
			if err != nil {
				return 0
			}
			return kib << 10
		}, true
	}
	cmd = exec.Command(name, args...)
	return cmd, func() int64 {
		if cmd.ProcessState == nil {
			return 0
		}
		return peakRSS(cmd.ProcessState)
	}, false
}

// gnuTime returns the path of GNU time, "" when it is not installed.
var gnuTime = sync.OnceValue(func() string {
	p, err := exec.LookPath("time")
	if err != nil {
		return ""
	}
	if out, _ := exec.Command(p, "--version").CombinedOutput(); !bytes.Contains(out, []byte("GNU")) {
		return ""
	}
	return p
})
