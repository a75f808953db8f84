package gpu_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Every "scenario N" (or "Scenarios N to M", "TestScenarioNN_") cited in the
// code of rt/gpu and its backends names a scenario that docs/gpu.md numbers
// in its "Tests" section.
func TestCitedScenariosAreNumberedInTheDocs(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "gpu.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	i := strings.Index(text, "\n## Tests\n")
	if i < 0 {
		t.Fatal(`docs/gpu.md has no "Tests" section`)
	}
	section := text[i+1:]
	if j := strings.Index(section[1:], "\n## "); j >= 0 {
		section = section[:j+1]
	}
	numbered := map[int]bool{}
	for _, m := range regexp.MustCompile(`(?m)^(\d+)\. `).FindAllStringSubmatch(section, -1) {
		n, _ := strconv.Atoi(m[1])
		numbered[n] = true
	}
	if len(numbered) == 0 {
		t.Fatal("docs/gpu.md numbers no scenario")
	}
	cite := regexp.MustCompile(`(?i)scenarios? (\d+)(?:(?: to |-| and )(\d+))?|TestScenario(\d+)_`)
	cited := 0
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || path == "scenarios_doc_test.go" {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range cite.FindAllStringSubmatch(string(src), -1) {
			for _, s := range m[1:] {
				if s == "" {
					continue
				}
				n, _ := strconv.Atoi(s)
				cited++
				if !numbered[n] {
					t.Errorf("%s cites scenario %d, which docs/gpu.md does not number", path, n)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited == 0 {
		t.Fatal("found no citation: the pattern is wrong")
	}
}
