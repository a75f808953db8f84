package codegen

import (
	"reflect"
	"testing"
)

// TestFreeUses: a body in its hook binds exactly the names it refers to; a name it declares
// itself, or names only as a composite literal's key, is not a use.
func TestFreeUses(t *testing.T) {
	names := []string{"g", "k", "m", "T"}
	for _, c := range []struct {
		text string
		want map[string]bool // nil: the body must keep its own function
	}{
		{"{ T[0] = float64(k) }", map[string]bool{"T": true, "k": true}},
		{"{ k := 3; _ = k; T[0] = 1 }", map[string]bool{"T": true}},
		{"{ for m := range 3 { _ = m } }", map[string]bool{}},
		{"{ f := func() int { return m }; _ = f }", map[string]bool{"m": true}},
		{"{ _ = g.N }", map[string]bool{"g": true}},
		{"{ _ = point{k: 1} }", nil},
		{"{ _ = point{k: k} }", map[string]bool{"k": true}},
		{"{ not go", nil},
	} {
		got, ok := freeUses(c.text, names)
		if c.want == nil {
			if ok {
				t.Errorf("%q: ok with uses %v, want the body function", c.text, got)
			}
			continue
		}
		if !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: uses %v (ok %v), want %v", c.text, got, ok, c.want)
		}
	}
}

// TestUnwrap: a body's braces go only when none of its own declarations is a name of the
// hook's scope, and the position then moves to the text inside them.
func TestUnwrap(t *testing.T) {
	taken := map[string]bool{"k": true, "err": true}
	pos := posT{Line: 10}
	if text, p := unwrap("{\n    n := k\n    _ = n\n}", pos, taken); text != "\n    n := k\n    _ = n\n" || p.Line != 10 {
		t.Errorf("unwrapped %q at line %d", text, p.Line)
	}
	if text, p := unwrap("\n{\n    n := k\n}", pos, taken); text != "\n    n := k\n" || p.Line != 11 {
		t.Errorf("unwrapped %q at line %d, want line 11", text, p.Line)
	}
	for _, keep := range []string{
		"{\n    k := 2\n    _ = k\n}",        // hides a binding
		"{\n    x, err := f()\n    _ = x\n}", // would assign the hook's err
		"{\n    var k int\n    _ = k\n}",
		"{ a() }\n{ b() }",
		"a()",
	} {
		if text, _ := unwrap(keep, pos, taken); text != keep {
			t.Errorf("unwrapped %q to %q", keep, text)
		}
	}
}
