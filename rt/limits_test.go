package rt_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/jdf2go/jdf2go/codegen"
	"github.com/jdf2go/jdf2go/parser"
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

// TestDescriptorFields checks that the fields of rt.TiledMatrix that the checker maps PaRSEC's
// descriptor fields to (descA->mt is descA.MT) are those of the type: parser keeps the list
// so that the compiler does not link the runtime.
func TestDescriptorFields(t *testing.T) {
	var got []string
	typ := reflect.TypeFor[rt.TiledMatrix]()
	for i := range typ.NumField() {
		if f := typ.Field(i); f.IsExported() {
			got = append(got, f.Name)
		}
	}
	want := slices.Clone(parser.TiledMatrixFields)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("rt.TiledMatrix's exported fields are %v, parser.TiledMatrixFields %v: update parser/descriptor.go", got, want)
	}
}
