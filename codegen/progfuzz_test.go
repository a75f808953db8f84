package codegen

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A random valid JDF program, drawn from the bytes of a fuzz input: globals (an int, a bool, a
// collection), a few classes in a line, each with one or two parameters over ranges,
// definitions, an RW flow whose guarded input comes from the class before it or from the
// collection and whose guarded output goes to the class after it (over a range, sometimes) or
// to the collection, and a priority. Expressions mix numbers and conditions both ways, unary
// operators and ternaries, nested in every position and chained in else position. Every
// program is valid by construction: check must accept it, gen must generate it and the output
// must type-check.

// progRand draws choices from the bytes of a fuzz input; past its end every choice is 0, which
// always picks the smallest program.
type progRand struct {
	b []byte
	i int
}

// n returns a choice in [0, k).
func (r *progRand) n(k int) int {
	if r.i >= len(r.b) {
		return 0
	}
	v := int(r.b[r.i]) % k
	r.i++
	return v
}

// progClass is what expressions of one class may name.
type progClass struct {
	params []string
	defs   []string // definitions that are not parameters, in order
}

type progGen struct {
	r       *progRand
	b       strings.Builder
	classes []progClass
}

// randomProgram returns the program drawn from data.
func randomProgram(data []byte) []byte {
	g := &progGen{r: &progRand{b: data}}
	g.b.WriteString("%option name = \"Rand\"\n\nNB [type = \"int\"]\nS [type = \"int\"]\nB [type = \"bool\"]\ndata [type = \"*rt.Vector\"]\n\n")
	nc := 1 + g.r.n(4)
	g.classes = make([]progClass, nc)
	for i := range g.classes {
		c := &g.classes[i]
		c.params = []string{"k"}
		if g.r.n(2) == 1 {
			c.params = append(c.params, "m")
		}
		for d := range g.r.n(3) {
			c.defs = append(c.defs, fmt.Sprintf("d%d", d))
		}
	}
	for i := range g.classes {
		g.class(i)
	}
	return []byte(g.b.String())
}

func (g *progGen) class(i int) {
	c := g.classes[i]
	fmt.Fprintf(&g.b, "C%d(%s)\n", i, strings.Join(c.params, ", "))
	g.b.WriteString("  k = 0 .. NB\n")
	vis := &progClass{params: []string{"k"}}
	if len(c.params) == 2 {
		switch g.r.n(3) {
		case 0:
			g.b.WriteString("  m = 0 .. k\n")
		case 1:
			g.b.WriteString("  m = k .. NB .. 2\n")
		default:
			fmt.Fprintf(&g.b, "  m = %s .. %s\n", g.expr(vis, 2, false), g.expr(vis, 2, false))
		}
		vis.params = append(vis.params, "m")
	}
	for _, d := range c.defs {
		fmt.Fprintf(&g.b, "  %s = %s\n", d, g.expr(vis, 3, false))
		vis.defs = append(vis.defs, d)
	}
	fmt.Fprintf(&g.b, "  : data(%s)\n", g.expr(vis, 1, false))
	g.b.WriteString("  RW A <- ")
	if i > 0 && g.r.n(3) != 0 {
		fmt.Fprintf(&g.b, "(%s) ? A %s : data(%s)\n", g.expr(vis, 2, true), g.target(vis, i-1, false), g.expr(vis, 2, false))
	} else {
		fmt.Fprintf(&g.b, "data(%s)\n", g.expr(vis, 2, false))
	}
	g.b.WriteString("       -> ")
	if i+1 < len(g.classes) && g.r.n(3) != 0 {
		fmt.Fprintf(&g.b, "(%s) ? A %s : data(%s)\n", g.expr(vis, 2, true), g.target(vis, i+1, true), g.expr(vis, 2, false))
	} else {
		fmt.Fprintf(&g.b, "data(%s)\n", g.expr(vis, 2, false))
	}
	if g.r.n(4) != 0 {
		fmt.Fprintf(&g.b, "  ; %s\n", g.expr(vis, 4, false))
	}
	g.b.WriteString("BODY\n{\n    A[0] += 1\n}\nEND\n\n")
}

// target is class j with one argument per parameter; on an output an argument may be a range.
func (g *progGen) target(vis *progClass, j int, output bool) string {
	var args []string
	for range g.classes[j].params {
		if output && g.r.n(4) == 0 {
			args = append(args, g.expr(vis, 1, false)+" .. "+g.expr(vis, 1, false))
			continue
		}
		args = append(args, g.expr(vis, 2, false))
	}
	return fmt.Sprintf("C%d(%s)", j, strings.Join(args, ", "))
}

// expr returns an expression of at most depth levels of operators (a chain of ternaries
// counts one) that names only what vis holds: a condition when cond, else a number. Either
// may come out as the other kind, which JDF converts, as C does.
func (g *progGen) expr(vis *progClass, depth int, cond bool) string {
	if depth <= 0 || g.r.n(3) == 0 {
		return g.leaf(vis, cond)
	}
	sub := func(c bool) string { return g.expr(vis, depth-1, c) }
	if cond {
		switch g.r.n(7) {
		case 0:
			return "(" + sub(false) + []string{" < ", " == ", " != ", " >= "}[g.r.n(4)] + sub(false) + ")"
		case 1:
			return "(" + sub(true) + " && " + sub(true) + ")"
		case 2:
			return "(" + sub(true) + " || " + sub(true) + ")"
		case 3:
			return "!" + sub(true)
		case 4:
			return sub(false) // a number used as a condition
		case 5:
			return g.ternaries(vis, depth, true)
		default:
			return sub(false) + " > " + sub(false)
		}
	}
	switch g.r.n(7) {
	case 0:
		return sub(false) + " + " + sub(false)
	case 1:
		return "(" + sub(false) + " - " + sub(false) + ")"
	case 2:
		return "(" + sub(false) + ") * " + sub(false)
	case 3:
		return "-" + sub(false)
	case 4:
		return "(" + sub(true) + ")" // a condition used as a number
	default:
		return g.ternaries(vis, depth, false)
	}
}

// ternaries returns a chain of one to eight ternaries in else position, parenthesised; their
// conditions and branches nest further ternaries while depth lasts.
func (g *progGen) ternaries(vis *progClass, depth int, cond bool) string {
	var b strings.Builder
	b.WriteString("(")
	for range 1 + g.r.n(8) {
		fmt.Fprintf(&b, "%s ? %s : ", g.expr(vis, depth-1, true), g.expr(vis, depth-1, cond))
	}
	b.WriteString(g.expr(vis, depth-1, cond) + ")")
	return b.String()
}

func (g *progGen) leaf(vis *progClass, cond bool) string {
	names := append(append([]string{"NB", "S"}, vis.params...), vis.defs...)
	if cond && g.r.n(3) == 0 {
		return "B"
	}
	if g.r.n(3) == 0 {
		return fmt.Sprint(g.r.n(10))
	}
	return names[g.r.n(len(names))]
}

// progSeeds are fuzz inputs that draw programs of every shape above.
var progSeeds = [][]byte{
	nil,
	[]byte("\x03\x01\x02\x01\x02\x00\x01\x02\x05\x06\x07\x01\x02\x03\x04\x05\x06"),
	[]byte("jdf2go draws a program from these bytes, more of them make more of it"),
	[]byte("\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0\xef\xee\xed\xec\xeb\xea\xe9\xe8"),
	[]byte(strings.Repeat("\x05\x06\x01\x07", 40)),
}

// FuzzPrograms: every random valid program passes check, generates, and its output
// type-checks.
func FuzzPrograms(f *testing.F) {
	for _, s := range progSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4<<10 {
			t.Skip()
		}
		src := randomProgram(data)
		checkErrs, genErrs, out := checkAndGen(t, "rand.jdf", src)
		switch {
		case checkErrs != "":
			t.Fatalf("check rejects a valid program:\n%s\n%s", checkErrs, numbered(src))
		case genErrs != "":
			t.Fatalf("check accepts it, gen rejects it:\n%s\n%s", genErrs, numbered(src))
		case out == nil:
			t.Fatalf("generation failed:\n%s", numbered(src))
		}
		if err := typeCheck(out); err != nil {
			t.Fatalf("the generated code does not type-check:\n%v\n%s\n%s", err, numbered(src), numbered(out))
		}
	})
}

// TestRandomProgramsVet: go vet passes on the code generated for the seeds of FuzzPrograms
// (too slow to run on every fuzz input).
func TestRandomProgramsVet(t *testing.T) {
	if testing.Short() {
		t.Skip("go vet builds rt")
	}
	dir := newModule(t)
	for i, s := range progSeeds {
		src := randomProgram(s)
		_, _, out := checkAndGen(t, "rand.jdf", src)
		if out == nil {
			t.Fatalf("seed %d does not generate:\n%s", i, numbered(src))
		}
		pkg := fmt.Sprintf("p%d", i)
		write(t, filepath.Join(dir, pkg, "rand_jdf.go"), []byte(strings.Replace(string(out), "package p\n", "package "+pkg+"\n", 1)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := goCmd(ctx, dir, "vet", "./..."); err != nil {
		t.Fatalf("go vet: %v\n%s", err, out)
	}
}
