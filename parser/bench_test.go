package parser

import (
	"fmt"
	"strings"
	"testing"
)

// classLines is the number of lines genJDF writes per task class.
const classLines = 29

// genJDF writes a valid program of at least `lines` lines (and at least two
// classes): a chain of task classes, each with ranges, guards, a broadcast,
// a CTL gather, inline code, properties, a priority and a multi-line body.
func genJDF(lines int) []byte {
	var b strings.Builder
	b.WriteString("extern \"Go\" %{\nimport \"fmt\"\n\nfunc f(k int) int { return k }\n%}\n\n")
	b.WriteString("N [type = \"int\"]\nM [type = \"*rt.TiledMatrix\"]\nHALF [type = \"int\" hidden = on default = \"N / 2\"]\n\n")
	n := max((lines+classLines-1)/classLines, 2)
	for i := 0; i < n; i++ {
		next := (i + 1) % n
		prev := (i + n - 1) % n
		fmt.Fprintf(&b, `// class %[1]d
C%[1]d(k, m) [high_priority = on]
  k = 0 .. N - 1
  m = [j = 0 .. 3] k + j * 2
  loc = %%{ return f(k) + m %%}
  : M(k, m)
  READ A <- (k == 0) ? M(k, m) : A C%[1]d(k - 1, m)
         -> (k < N - 1 && m != HALF) ? A C%[1]d(k + 1, m)
         -> [i = 0 .. 3] (i != k) ? B C%[2]d(i, m)
  READ B <- (k >= 0 || m < 0) ? A C%[3]d(k, m) : M(k, m)
  RW   C <- (k == 0) ? NEW : C C%[1]d(k - 1, m) [type = DEFAULT]
         -> (k == N - 1) ? M(k, m) : C C%[1]d(k + 1, m)
  CTL  X <- X C%[1]d(0 .. k, m)
         -> X C%[1]d(k .. N - 1, m)
  ; (N - k) * (N - k) + m %% 3
BODY [type = CUDA device = k + m A.size = 8 * N]
{
    _ = loc
}
END
BODY
{
    for i := range C {
        C[i] += A[i] * B[i]
    }
    fmt.Sprint(k, m, loc)
}
END

`, i, next, prev)
	}
	return []byte(b.String())
}

// BenchmarkParseCheck measures parse+check throughput on a generated
// 20,000-line program. Floor: 50,000 lines/s.
func BenchmarkParseCheck(b *testing.B) {
	src := genJDF(20000)
	lines := strings.Count(string(src), "\n")
	if lines < 20000 {
		b.Fatalf("the generated program has %d lines, want at least 20,000", lines)
	}
	// Its classes are past MaxClasses: the program measures throughput, not a real size.
	opts := CheckOptions{Unbounded: true}
	if _, diags := ParseAndCheckWith("gen.jdf", src, opts); len(diags) > 0 {
		b.Fatalf("generated program has diagnostics: %v", diags[:min(5, len(diags))])
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ParseAndCheckWith("gen.jdf", src, opts)
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
	b.ReportMetric(float64(lines), "lines")
}

// BenchmarkFormat measures the canonical printer on the same program.
func BenchmarkFormat(b *testing.B) {
	src := genJDF(20000)
	prog, _ := Parse("gen.jdf", src)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Format(prog)
	}
}

// BenchmarkScan measures the scanner alone (the generated lexer and the
// assembly of comments and bodies from its tokens) on the same program.
func BenchmarkScan(b *testing.B) {
	src := genJDF(20000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		s := newScanner("gen.jdf", string(src), false)
		for {
			if t, _ := s.Next(); t.EOF() {
				break
			}
		}
	}
}
