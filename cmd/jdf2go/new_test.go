package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNewProgramBuildsAndRuns: what `new` writes generates (go generate, through the
// module's tool line), vets and runs in a module of its own that requires this checkout
// (replace directive), offline, and prints
// the pipeline's sum: block k holds 4 copies of 2(k+1), so 8 blocks sum to 288.
func TestNewProgramBuildsAndRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program with the go command")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := fmt.Sprintf("module example.com/newprog\n\ngo 1.25.0\n\nrequire github.com/jdf2go/jdf2go v0.0.0\n\nreplace github.com/jdf2go/jdf2go => %s\n\ntool github.com/jdf2go/jdf2go/cmd/jdf2go\n", repo)
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := runCLI(t, "new", "-C", dir, "my_pipe")
	if code != 0 || stderr != "" {
		t.Fatalf("new: exit %d\n%s%s", code, stdout, stderr)
	}
	main, err := os.ReadFile(filepath.Join(dir, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	const line = "//go:generate go tool jdf2go gen -o my_pipe_jdf.go my_pipe.jdf\n"
	if !strings.Contains(string(main), line) {
		t.Errorf("main.go lacks %q", line)
	}
	if code, stdout, stderr := runCLI(t, "check", "-Werror", filepath.Join(dir, "my_pipe.jdf")); code != 0 {
		t.Fatalf("check: exit %d\n%s%s", code, stdout, stderr)
	}
	t.Chdir(dir)
	goFlags := "GOFLAGS=-mod=mod"
	goCmd := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Env = append(os.Environ(), goFlags, "GOPROXY=off", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// go tool needs the tool's own requirements in go.mod (as go get -tool writes
	// them), whatever -mod says; tidy takes no -mod flag.
	goFlags = "GOFLAGS="
	goCmd("mod", "tidy")
	goFlags = "GOFLAGS=-mod=mod"
	goCmd("generate")
	gen, err := os.ReadFile("my_pipe_jdf.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gen), "\npackage main\n") {
		t.Errorf("generated file is not in package main:\n%.300s", gen)
	}
	goCmd("vet", ".")
	if out := goCmd("run", ".", "-n", "8"); out != "my_pipe: 8 blocks, sum 288\n" {
		t.Errorf("go run: %q", out)
	}
}

// TestNewRefusesToOverwrite: new writes nothing when NAME.jdf or main.go exists, and
// says which file; a name that is not an identifier is a usage error.
func TestNewRefusesToOverwrite(t *testing.T) {
	for _, existing := range []string{"p.jdf", "main.go"} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, existing), []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI(t, "new", "-C", dir, "p")
		if code != 1 || !strings.Contains(stderr, errWouldOverwrite.Error()+": "+filepath.Join(dir, existing)) {
			t.Errorf("%s exists: exit %d, stderr %q", existing, code, stderr)
		}
		entries, _ := os.ReadDir(dir)
		if b, _ := os.ReadFile(filepath.Join(dir, existing)); len(entries) != 1 || string(b) != "keep" {
			t.Errorf("%s exists: new wrote or changed files (%d entries)", existing, len(entries))
		}
	}
	if err := runNew(&streams{}, t.TempDir()+"/missing", "p"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing folder: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runNew(&streams{}, dir, "p"); !errors.Is(err, errWouldOverwrite) {
		t.Errorf("existing main.go: %v, want errWouldOverwrite", err)
	}
	for _, bad := range []string{"1st", "my-pipe", "a b", ""} {
		if code, _, _ := runCLI(t, "new", "-C", t.TempDir(), bad); code != 2 {
			t.Errorf("new %q: exit %d, want 2", bad, code)
		}
	}
}

func TestExportedName(t *testing.T) {
	for in, want := range map[string]string{"pipeline": "Pipeline", "my_pipe": "MyPipe", "x2": "X2", "A_b_": "AB"} {
		if got := exportedName(in); got != want {
			t.Errorf("exportedName(%q) = %q, want %q", in, got, want)
		}
	}
}
