package jdf2go_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docsHeadings returns the headings of each docs/*.md file, by file name.
func docsHeadings(t *testing.T) map[string]map[string]bool {
	t.Helper()
	files, err := filepath.Glob("docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	out := map[string]map[string]bool{}
	heading := regexp.MustCompile(`(?m)^#+ (.+)$`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		hs := map[string]bool{}
		for _, m := range heading.FindAllStringSubmatch(string(b), -1) {
			hs[strings.ToLower(strings.TrimSpace(m[1]))] = true
		}
		out[filepath.ToSlash(f)] = hs
	}
	return out
}

// TestDocCitations: a comment or document that cites `docs/NAME.md, "Heading"` names a file
// of docs/ and one of its headings (a citation may wrap onto the next comment line).
func TestDocCitations(t *testing.T) {
	docs := docsHeadings(t)
	cite := regexp.MustCompile(`(docs/[a-z]+\.md)(?:, "([^"]+)")?`)
	n := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".jdf")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// Join comment lines, so that a heading wrapped onto the next line reads whole.
		text := regexp.MustCompile(`\n\s*// `).ReplaceAllString(string(b), " ")
		for _, m := range cite.FindAllStringSubmatch(text, -1) {
			n++
			hs, ok := docs[m[1]]
			if !ok {
				t.Errorf("%s cites %s, which does not exist", path, m[1])
				continue
			}
			if m[2] != "" && !hs[strings.ToLower(m[2])] {
				t.Errorf("%s cites %s, %q: no such heading", path, m[1], m[2])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Fatalf("found %d citations of docs/; the scan is broken", n)
	}
}

// TestDocLinks: relative links in README.md and docs/*.md point at files that exist.
func TestDocLinks(t *testing.T) {
	files, _ := filepath.Glob("docs/*.md")
	files = append(files, "README.md")
	link := regexp.MustCompile(`\]\(([^)#]+)(#[^)]*)?\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Code blocks and code spans hold brackets that are not links.
		text := regexp.MustCompile("(?s)```.*?```|`[^`\n]*`").ReplaceAllString(string(b), "")
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
				t.Errorf("%s links to %s: %v", f, target, err)
			}
		}
	}
}

// goFiles returns the .go files of the repository (not under testdata or a hidden folder),
// with or without the tests.
func goFiles(t *testing.T, tests bool) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || (!tests && strings.HasSuffix(path, "_test.go")) {
			return nil
		}
		files = append(files, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDocEnvVars: every JDF2GO_* variable the code (tests left out) reads is in
// docs/runtime.md, and every variable docs/runtime.md names is read, as a string, by the
// code or its tests (the doc's second table lists those only tests read).
func TestDocEnvVars(t *testing.T) {
	doc, err := os.ReadFile("docs/runtime.md")
	if err != nil {
		t.Fatal(err)
	}
	env := regexp.MustCompile(`JDF2GO_[A-Z0-9_]*[A-Z0-9]`)
	seen := map[string]string{}
	for _, path := range goFiles(t, false) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range env.FindAllString(string(b), -1) {
			if _, ok := seen[v]; !ok {
				seen[v] = path
			}
		}
	}
	if len(seen) < 10 {
		t.Fatalf("found %d variables; the scan is broken", len(seen))
	}
	for v, path := range seen {
		if !regexp.MustCompile(`\b` + v + `\b`).Match(doc) {
			t.Errorf("%s (read in %s) is not in docs/runtime.md", v, path)
		}
	}

	// The other way: a variable in the doc that no string of the code or tests holds is
	// read by nothing.
	quoted := regexp.MustCompile("[\"`](" + env.String() + ")[\"`=]")
	read := map[string]bool{}
	for _, path := range goFiles(t, true) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range quoted.FindAllStringSubmatch(string(b), -1) {
			read[m[1]] = true
		}
	}
	for _, v := range env.FindAllString(string(doc), -1) {
		if !read[v] {
			t.Errorf("docs/runtime.md names %s, which no code or test reads", v)
			read[v] = true // once
		}
	}
}
