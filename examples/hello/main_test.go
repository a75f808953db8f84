package main

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"
)

func TestHello(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-n", "6", "-workers", "2"}, &out); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	sort.Strings(got)
	var want []string
	for k := 0; k < 6; k++ {
		want = append(want, fmt.Sprintf("hello from task %d of 6", k))
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("output:\n%s\nwant the lines:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
