package parser

import "testing"

func TestKinds(t *testing.T) {
	src := `G [type = "*rt.Vector"]
N [type = "int"]
T(k)
  k = 0 .. N
  a = k + 1
  b = k < N
  c = !k
  d = k ? 1 : 0
  e = (k == 0) ? k < 1 : k > 2
  f = N
  g = [i = 0 .. 2] i
  h = k ? N : 1
  : G(k)
  READ X <- G(k)
BODY
END
`
	prog, diags := ParseAndCheck("k.jdf", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tc := prog.Classes[0]
	want := map[string]Kind{"a": KindInt, "b": KindBool, "c": KindBool, "d": KindInt, "e": KindBool, "f": KindOpaque, "h": KindOpaque}
	for name, k := range want {
		if got := ResultKind(tc.Def(name).Value); got != k {
			t.Errorf("ResultKind(%s) = %v, want %v", name, got, k)
		}
	}
	if got := ResultKind(tc.Def("g").Value.(*LocalSetExpr).X); got != KindInt {
		t.Errorf("named index is %v, want int", got)
	}
	c := tc.Def("c").Value.(*UnaryExpr)
	if WantKind(c, c.X, KindInt) != KindBool {
		t.Error("! wants a bool operand")
	}
	d := tc.Def("d").Value.(*TernaryExpr)
	if WantKind(d, d.Cond, KindInt) != KindBool || WantKind(d, d.Then, KindInt) != KindInt {
		t.Error("ternary: condition wants bool, branches the context")
	}
	b := tc.Def("b").Value.(*BinaryExpr)
	if WantKind(b, b.X, KindInt) != KindInt {
		t.Error("< wants int operands")
	}
	if OpAnd1.GoString() != "&&" || OpOr1.GoString() != "||" {
		t.Error("single & and | must become && and || in Go")
	}
}

func TestResolution(t *testing.T) {
	prog, diags := ParseAndCheck("r.jdf", []byte(`extern "Go" %{
import "math"
func f(x int) int { return x }
%}
N [type = "int"]
V [type = "*rt.Vector"]
T(k)
  k = 0 .. f(N)
  m = [i = 0 .. 3] i + k
  : V(k)
  RW A <- (k == 0) ? V(k) : A T(k - 1)
       -> [j = 0 .. 1] (j == 0 && k < N) ? A T(k + 1)
  ; int(math.Sqrt(float64(k)))
BODY
END
`))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tc := prog.Classes[0]
	to := tc.Def("k").Range().To.(*CallExpr)
	if to.Fun.(*Name).Ref != RefGo || to.Args[0].(*Name).Global != prog.Global("N") {
		t.Error("f(N): f is a Go name, N the global")
	}
	m := tc.Def("m").Value.(*LocalSetExpr)
	sum := m.X.(*BinaryExpr)
	if sum.X.(*Name).Index != m.Named[0] || sum.Y.(*Name).Def != tc.Def("k") {
		t.Error("i + k: i is the named index, k the parameter")
	}
	out := tc.Flows[0].Out()[0]
	if out.Then.Class != tc || out.Then.FlowRef != tc.Flows[0] || out.Named[0].Name != "j" {
		t.Error("output target not resolved")
	}
	in := tc.Flows[0].In()[0]
	if in.Then.Collection != prog.Global("V") || in.Else.FlowRef.Index != 0 {
		t.Error("input targets not resolved")
	}
	if !prog.Global("V").Collection || prog.Global("V").Arity != 1 || tc.Affinity.Global != prog.Global("V") {
		t.Error("collection use not recorded")
	}
	if tc.Params[0].Def != tc.Def("k") || tc.Def("m").Param != nil {
		t.Error("parameter links")
	}
}
