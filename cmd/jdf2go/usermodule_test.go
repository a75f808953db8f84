package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// tutorialBlock matches a fenced block of docs/tutorial.md that names a file, an expected
// output or a step in its info string: ```jdf file=NAME, ```go file=NAME,
// ```text output=NAME, ```sh run=NAME.
var tutorialBlock = regexp.MustCompile("(?ms)^```\\w+ (file|output|run)=(\\S+)\n(.*?)^```")

// TestUserModule follows the tutorial's first section as a new user does, with the commands
// as docs/tutorial.md writes them: the `run=module` block (a module of its own, in a
// workspace with this checkout, the tool recorded in go.mod), the files of the next section,
// then the `run=build` block (go generate, go run), whose output must be the tutorial's;
// then `go tool jdf2go new` in a folder of the same module. The module cache starts empty,
// so every dependency comes from the module proxy, as for a user on a fresh machine: the
// test skips, saying so, when the proxy cannot be reached, and fails on anything else.
func TestUserModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module (-short)")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the tutorial's commands are sh")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "tutorial.md"))
	if err != nil {
		t.Fatal(err)
	}
	var want string
	files := map[string][]byte{}
	steps := map[string]string{}
	for _, m := range tutorialBlock.FindAllSubmatch(doc, -1) {
		switch kind, name, body := string(m[1]), string(m[2]), m[3]; kind {
		case "output":
			want = string(body)
		case "run":
			steps[name] = string(body)
		default:
			files[name] = body
		}
	}
	if len(files) < 2 || want == "" || steps["module"] == "" || steps["build"] == "" {
		t.Fatalf("docs/tutorial.md: %d file blocks, output %q, steps %v; want the JDF, main.go, the output "+
			"and the steps run=module and run=build", len(files), want, steps)
	}
	proxyReachable(t, goBin)

	top := t.TempDir()
	cache := t.TempDir()
	// The tutorial's environment: JDF2GO names the checkout. The module cache is empty and
	// writable (so that t.TempDir can remove it); GOFLAGS and GOWORK from the machine
	// running the test must not change what the commands do.
	env := append(os.Environ(), "JDF2GO="+root, "GOMODCACHE="+cache, "GOFLAGS=-modcacherw",
		"GOWORK=", "GOTOOLCHAIN=local")
	run := func(dir, name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir, cmd.Env = dir, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	// The step makes the module's folder and changes into it; the files go there.
	run(top, sh, "-e", "-c", steps["module"])
	entries, err := os.ReadDir(top)
	if err != nil || len(entries) != 1 || !entries[0].IsDir() {
		t.Fatalf("the run=module step should make one folder, the module's: %v %v", entries, err)
	}
	dir := filepath.Join(top, entries[0].Name())
	if mod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err != nil || !strings.Contains(string(mod), "\ntool github.com/jdf2go/jdf2go/cmd/jdf2go\n") {
		t.Fatalf("the run=module step left no tool line in go.mod (%v):\n%s", err, mod)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := run(dir, sh, "-e", "-c", steps["build"]); got != want {
		t.Fatalf("the run=build step printed %q, want %q (docs/tutorial.md)", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "pipeline_jdf.go")); err != nil {
		t.Fatalf("go generate wrote no pipeline_jdf.go: %v", err)
	}
	run(dir, goBin, "vet", "./...")
	// The tutorial's other start: `go tool jdf2go new NAME` writes a program to edit.
	if err := os.Mkdir(filepath.Join(dir, "starter"), 0o755); err != nil {
		t.Fatal(err)
	}
	run(dir, goBin, "tool", "jdf2go", "new", "-C", "starter", "starter")
	run(dir, goBin, "generate", "./...")
	run(dir, goBin, "vet", "./...")
	if got := run(dir, goBin, "run", "./starter", "-n", "8"); got != "starter: 8 blocks, sum 288\n" {
		t.Fatalf("go run ./starter printed %q", got)
	}
}

// proxyReachable skips the test when the go command has no module proxy to download from:
// GOPROXY off or direct only, or the first proxy not answering for a module this
// repository requires.
func proxyReachable(t *testing.T, goBin string) {
	t.Helper()
	out, err := exec.Command(goBin, "env", "GOPROXY").Output()
	if err != nil {
		t.Fatalf("go env GOPROXY: %v", err)
	}
	proxy, _, _ := strings.Cut(strings.TrimSpace(string(out)), ",")
	proxy, _, _ = strings.Cut(proxy, "|")
	if proxy == "" || proxy == "off" || proxy == "direct" {
		t.Skipf("the tutorial downloads modules through a module proxy; GOPROXY is %q", strings.TrimSpace(string(out)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(proxy, "/")+"/github.com/spf13/cobra/@v/list", nil)
	if err != nil {
		t.Skipf("the module proxy %q is not a URL: %v", proxy, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Skipf("the module proxy %s is unreachable: %v", proxy, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Skipf("the module proxy %s answers %s", proxy, resp.Status)
	}
}
