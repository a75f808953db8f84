package main

// Results as data: every results.json says when, from which commit, on which machine and with
// which command it was measured, and -record keeps it under a name that sorts by date, so that
// bench/results/ holds the measurements themselves and docs/performance.md only their current
// tables.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"time"
)

// buildCommit returns the commit this program was built from, with "+dirty" when the tree had
// changes: from the binary's build information (go build), else from git (go run, which does
// not stamp it), else "unknown".
func buildCommit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if rev != "" {
			return rev + dirty
		}
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
		rev += "+dirty"
	}
	return rev
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slug lowers s and keeps letters and digits, with single dashes between runs of them.
func slug(s string) string {
	return strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

// defaultMachineName names a machine by its GPU, if any, and its CPU count: "h200-16cpu",
// "2cpu". -machine replaces it with a name of one's own ("dev").
func defaultMachineName(m Machine) string {
	name := fmt.Sprintf("%dcpu", m.CPUs)
	if m.GPUs != "" && m.GPUs != "none" && m.GPUs != "unknown" {
		gpu, _, _ := strings.Cut(m.GPUs, ",")
		gpu = strings.TrimPrefix(slug(gpu), "nvidia-")
		name = gpu + "-" + name
	}
	return name
}

// errRecordName is returned when a machine or suite name leaves nothing for the file name.
var errRecordName = errors.New("bench: -record needs a machine name and suite pattern with letters or digits")

// recordPath returns DIR/<date>-<machine>-<suite>.json for a run on date, with "-2", "-3" ...
// before the extension when the name is taken, so that no earlier record is overwritten. An
// empty suite pattern (every suite) is "all".
func recordPath(dir string, date time.Time, machine, suite string) (string, error) {
	s := slug(suite)
	if suite == "" {
		s = "all"
	}
	m := slug(machine)
	if s == "" || m == "" {
		return "", errRecordName
	}
	base := fmt.Sprintf("%s-%s-%s", date.UTC().Format("2006-01-02"), m, s)
	for i := 1; ; i++ {
		name := base + ".json"
		if i > 1 {
			name = fmt.Sprintf("%s-%d.json", base, i)
		}
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return p, nil
		} else if err != nil {
			return "", err
		}
	}
}
