package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// tutorialBlock matches a fenced block of docs/tutorial.md that names a file or an expected
// output in its info string: ```jdf file=NAME, ```go file=NAME, ```text output=NAME.
var tutorialBlock = regexp.MustCompile("(?ms)^```\\w+ (file|output)=(\\S+)\n(.*?)^```")

// TestUserModule builds the tutorial's first program the way a user does, in a module of its
// own outside this repository: go mod init, go get -tool (jdf2go replaced by this checkout),
// a main.go whose go:generate line runs `go tool jdf2go gen`, then go generate, go mod tidy,
// go vet and go run; then `go tool jdf2go new` in a folder of the same module. It runs
// offline (GOPROXY=off: the module cache must already hold this repository's dependencies,
// as it does after building it) and checks each program's output, the first against the
// tutorial's.
func TestUserModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module (-short)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "tutorial.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var want string
	files := 0
	for _, m := range tutorialBlock.FindAllSubmatch(doc, -1) {
		kind, name, body := string(m[1]), string(m[2]), m[3]
		if kind == "output" {
			want = string(body)
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
		files++
	}
	if files < 2 || want == "" {
		t.Fatalf("docs/tutorial.md: %d file blocks and output %q; want the JDF, main.go and the output", files, want)
	}
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir, cmd.Env = dir, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("go %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	// The tutorial's steps, with a replace to this checkout. The checkout's go.sum holds the
	// sums of every module the program can need, so go get checks them without the network.
	run("mod", "init", "example.com/pipeline")
	run("mod", "edit", "-replace", "github.com/jdf2go/jdf2go="+root)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	run("get", "-tool", "github.com/jdf2go/jdf2go/cmd/jdf2go")
	if mod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err != nil || !strings.Contains(string(mod), "\ntool github.com/jdf2go/jdf2go/cmd/jdf2go\n") {
		t.Fatalf("go get -tool left no tool line in go.mod (%v):\n%s", err, mod)
	}
	run("generate", "./...")
	if _, err := os.Stat(filepath.Join(dir, "pipeline_jdf.go")); err != nil {
		t.Fatalf("go generate wrote no pipeline_jdf.go: %v", err)
	}
	run("mod", "tidy")
	run("vet", "./...")
	if got := run("run", "."); got != want {
		t.Fatalf("go run . printed %q, want %q (docs/tutorial.md)", got, want)
	}
	// The tutorial's other start: `go tool jdf2go new NAME` writes a program to edit.
	if err := os.Mkdir(filepath.Join(dir, "starter"), 0o755); err != nil {
		t.Fatal(err)
	}
	run("tool", "jdf2go", "new", "-C", "starter", "starter")
	run("generate", "./...")
	run("vet", "./...")
	if got := run("run", "./starter", "-n", "8"); got != "starter: 8 blocks, sum 288\n" {
		t.Fatalf("go run ./starter printed %q", got)
	}
}
