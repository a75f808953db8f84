package rt_test

import (
	"testing"

	"github.com/jdf2go/jdf2go/codegen"
	"github.com/jdf2go/jdf2go/rt"
)

// TestCodegenLimits checks that the descriptor limits codegen enforces are rt's: codegen keeps
// a copy so that the compiler does not link the runtime.
func TestCodegenLimits(t *testing.T) {
	for _, c := range []struct {
		name     string
		gen, got int
	}{
		{"MaxLocals", codegen.MaxLocals, rt.MaxLocals},
		{"MaxFlows", codegen.MaxFlows, rt.MaxFlows},
		{"MaxParams", codegen.MaxParams, rt.MaxParams},
		{"MaxIndex", codegen.MaxIndex, rt.MaxIndex},
	} {
		if c.gen != c.got {
			t.Errorf("codegen.%s = %d, rt.%s = %d: update codegen/limits.go", c.name, c.gen, c.name, c.got)
		}
	}
}
