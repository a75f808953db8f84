package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// runCLI runs the CLI in-process and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/jdf2go -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// TestCheckCorpus: `jdf2go check` exits 0 on every valid testdata file and
// 1 on every invalid one, and prints exactly the golden diagnostics.
func TestCheckCorpus(t *testing.T) {
	for dir, wantCode := range map[string]int{"valid": 0, "parsec": 0, "invalid": 1} {
		files, _ := filepath.Glob(filepath.Join("../../testdata", dir, "*.jdf"))
		if len(files) == 0 {
			t.Fatalf("no files in %s", dir)
		}
		t.Run(dir, func(t *testing.T) {
			t.Chdir(filepath.Join("../../testdata", dir))
			for _, f := range files {
				name := filepath.Base(f)
				code, stdout, stderr := runCLI(t, "check", name)
				if code != wantCode {
					t.Errorf("check %s: exit %d, want %d\n%s", name, code, wantCode, stderr)
				}
				if stdout != "" {
					t.Errorf("check %s wrote to stdout: %q", name, stdout)
				}
				want, err := os.ReadFile(strings.TrimSuffix(name, ".jdf") + ".err")
				if err != nil {
					t.Fatal(err)
				}
				if stderr != string(want) {
					t.Errorf("check %s:\n--- want\n%s--- got\n%s", name, want, stderr)
				}
			}
		})
	}
}

func TestCheckWerror(t *testing.T) {
	warn := "../../testdata/valid/warn_unused_flow.jdf"
	clean := "../../testdata/valid/chain.jdf"
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"check", warn}, 0},
		{[]string{"check", "-Werror", warn}, 1},
		{[]string{"check", "--Werror", warn}, 1},
		{[]string{"check", "-Werror", clean}, 0},
		{[]string{"check", clean, warn, "../../testdata/invalid/unknown_class.jdf"}, 1},
	} {
		if code, _, stderr := runCLI(t, tt.args...); code != tt.code {
			t.Errorf("%v: exit %d, want %d\n%s", tt.args, code, tt.code, stderr)
		}
	}
}

func TestExamplesCheck(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.jdf")
	if len(files) < 4 {
		t.Fatalf("want at least 4 examples, have %d", len(files))
	}
	code, _, stderr := runCLI(t, append([]string{"check", "-Werror"}, files...)...)
	if code != 0 || stderr != "" {
		t.Errorf("check examples: exit %d\n%s", code, stderr)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"bogus"}, 2, "unknown command"},
		{[]string{"check"}, 2, "requires at least 1 arg"},
		{[]string{"check", "--nope", "x.jdf"}, 2, "unknown flag"},
		{[]string{"graph"}, 2, "accepts 1 arg"},
		{[]string{"fmt", "-w", "-l", "x.jdf"}, 2, "exclusive"},
		{[]string{"check", "does-not-exist.jdf"}, 1, "no such file"},
		{[]string{"graph", "../../testdata/invalid/unknown_class.jdf"}, 1, "unknown task class"},
		{[]string{"fmt", "../../testdata/invalid/syntax_float.jdf"}, 1, "syntax error"},
	} {
		code, _, stderr := runCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr, tt.code, tt.msg)
		}
	}
}

func TestHelpHasExamples(t *testing.T) {
	for _, cmd := range []string{"check", "fmt", "graph", "version"} {
		code, out, _ := runCLI(t, "help", cmd)
		if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "jdf2go "+cmd) {
			t.Errorf("help %s: exit %d, no example:\n%s", cmd, code, out)
		}
	}
	code, out, _ := runCLI(t, "--help")
	if code != 0 || !strings.Contains(out, "check") || !strings.Contains(out, "graph") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(out, "jdf2go ") {
		t.Errorf("version: exit %d, %q", code, out)
	}
}

func TestGraph(t *testing.T) {
	for _, name := range []string{"potrf", "broadcast"} {
		code, out, stderr := runCLI(t, "graph", "../../examples/"+name+".jdf")
		if code != 0 {
			t.Fatalf("graph %s: exit %d\n%s", name, code, stderr)
		}
		golden(t, "testdata/graph_"+name+".dot", out)
	}
}

func TestFmt(t *testing.T) {
	in := "../../testdata/fmt/messy.jdf"
	want, err := os.ReadFile("../../testdata/fmt/messy.golden")
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "fmt", in)
	if code != 0 || out != string(want) {
		t.Errorf("fmt: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "fmt", "-l", in, "../../testdata/fmt/messy.golden")
	if code != 0 || out != in+"\n" {
		t.Errorf("fmt -l: exit %d, %q", code, out)
	}
	code, out, _ = runCLI(t, "fmt", "-d", in)
	if code != 0 {
		t.Errorf("fmt -d: exit %d", code)
	}
	golden(t, "testdata/fmt_messy.diff", out)

	tmp := filepath.Join(t.TempDir(), "m.jdf")
	src, _ := os.ReadFile(in)
	if err := os.WriteFile(tmp, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "fmt", "-w", tmp); code != 0 {
		t.Fatalf("fmt -w: exit %d %s", code, stderr)
	}
	if got, _ := os.ReadFile(tmp); string(got) != string(want) {
		t.Errorf("fmt -w wrote:\n%s", got)
	}
	if code, out, _ := runCLI(t, "fmt", "-l", tmp); code != 0 || out != "" {
		t.Errorf("fmt -l after -w: exit %d, %q", code, out)
	}
}

func TestStdin(t *testing.T) {
	var out, errb bytes.Buffer
	src := "V [type = \"*rt.Vector\"]\nT(k)\n k=0..1\n :V(k)\nBODY\nEND\n"
	code := run([]string{"fmt", "-"}, strings.NewReader(src), &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "  k = 0 .. 1\n") {
		t.Errorf("fmt -: exit %d\n%s%s", code, out.String(), errb.String())
	}
}

func TestDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	b := "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n12\n13"
	got := string(unifiedDiff("f", []byte(a), []byte(b)))
	want := "--- f\n+++ f (formatted)\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n@@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n 12\n+13\n\\ No newline at end of file\n"
	if got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	if unifiedDiff("f", []byte(a), []byte(a)) != nil {
		t.Error("diff of equal inputs is not nil")
	}
}

// TestGoStyleLongFlags: a long flag of any command may be written with one dash; short
// flags, clusters of them, values, "-" and everything after "--" are left alone.
func TestGoStyleLongFlags(t *testing.T) {
	root := &cobra.Command{Use: "x"}
	sub := &cobra.Command{Use: "sub"}
	sub.Flags().Bool("Werror", false, "")
	sub.Flags().StringP("pkg", "p", "", "")
	sub.Flags().BoolP("list", "l", false, "")
	sub.Flags().BoolP("diff", "d", false, "")
	root.AddCommand(sub)
	in := []string{"sub", "-Werror", "-pkg=a", "-pkg", "b", "-p", "c", "-ld", "-list", "--pkg", "-", "-nope", "--", "-Werror"}
	want := []string{"sub", "--Werror", "--pkg=a", "--pkg", "b", "-p", "c", "-ld", "--list", "--pkg", "-", "-nope", "--", "-Werror"}
	if got := goStyleLongFlags(root, in); !slices.Equal(got, want) {
		t.Errorf("goStyleLongFlags:\n got %q\nwant %q", got, want)
	}
}
