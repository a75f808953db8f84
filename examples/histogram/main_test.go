package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	for _, batching := range []string{"true", "false"} {
		var out bytes.Buffer
		if err := run([]string{"-nt", "2000", "-nb", "4", "-workers", "2", "-batching=" + batching}, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "histogram checked") {
			t.Errorf("output %q", out.String())
		}
	}
	if err := run([]string{"-nt", "0"}, &bytes.Buffer{}); err == nil {
		t.Error("run accepted -nt 0")
	}
}
