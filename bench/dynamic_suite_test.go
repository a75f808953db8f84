package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The memory workload's child runs its tasks and reports them with its resident set.
func TestDynamicMemoryChild(t *testing.T) {
	var out strings.Builder
	const n = 100000
	if code := memoryChild(n, &out); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	var rep memReport
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	if rep.Tasks != n || rep.Nanos <= 0 || rep.Err != "" || rep.Window != 10000 {
		t.Fatalf("report %+v", rep)
	}
	if residentSet() > 0 && rep.Final <= 0 {
		t.Fatalf("no resident set in %+v", rep)
	}
}
