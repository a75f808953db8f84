package parser

// PaRSEC's descriptor fields in a Go file. A JDF ported from PaRSEC reads its matrix
// through the fields of the C descriptor (descA->mt, descA->nb); in a Go file the global
// is an *rt.TiledMatrix, whose fields are exported and named otherwise. Check maps each
// C field that has an rt equivalent (SelectorExpr.Field, which codegen selects), and
// rejects, at its position, the lower-case fields that have none, saying what to use:
// generated code could not compile them anyway, and the Go compiler's message would
// name a field the user never wrote.

import (
	"sort"
	"strings"
)

// TiledMatrixType is the Go type of a global that holds a tiled matrix.
const TiledMatrixType = "*rt.TiledMatrix"

// TiledMatrixFields are the exported fields of rt.TiledMatrix (a test of rt compares
// them with the type).
var TiledMatrixFields = []string{"M", "N", "MB", "NB", "MT", "NT", "P", "Q", "KP", "KQ", "Rank"}

// descriptorFields maps the fields of PaRSEC's tiled-matrix descriptor to rt.TiledMatrix's.
// An rt matrix is always a whole matrix, never a submatrix of a larger one, so the fields
// of the enclosing matrix (lm, ln, lmt, lnt) are those of the matrix itself.
var descriptorFields = map[string]string{
	"m": "M", "n": "N", "mb": "MB", "nb": "NB", "mt": "MT", "nt": "NT",
	"lm": "M", "ln": "N", "lmt": "MT", "lnt": "NT",
}

// descriptorHints tell what to use for the C fields without an rt equivalent.
var descriptorHints = map[string]string{
	"i":     "use 0: an rt.TiledMatrix is never a submatrix, so its first row is 0",
	"j":     "use 0: an rt.TiledMatrix is never a submatrix, so its first column is 0",
	"super": "use Rank for super.myrank, and P*Q for super.nodes",
	"grid":  "use P and Q for grid.rows and grid.cols, KP and KQ for grid.krows and grid.kcols",
	"bsiz":  "use MB*NB",
	"llm":   "use M: an rt.TiledMatrix is not stored as one LAPACK array",
	"lln":   "use N: an rt.TiledMatrix is not stored as one LAPACK array",
}

// descriptorField resolves x.Sel when x.X is a global of type *rt.TiledMatrix and Sel is
// not one of its exported fields.
func (c *checker) descriptorField(x *SelectorExpr) {
	n, ok := x.X.(*Name)
	if !ok || n.Ref != RefGlobal || n.Global == nil || strings.TrimSpace(n.Global.Type) != TiledMatrixType {
		return
	}
	if x.Sel == "" || strings.ToUpper(x.Sel[:1]) == x.Sel[:1] {
		return // exported: rt's own field or method, left to the Go compiler
	}
	if f, ok := descriptorFields[x.Sel]; ok {
		x.Field = f
		return
	}
	op := "."
	if x.Arrow {
		op = "->"
	}
	hint := descriptorHints[x.Sel]
	if hint == "" {
		fields := append([]string(nil), TiledMatrixFields...)
		sort.Strings(fields)
		hint = "its fields are " + strings.Join(fields, ", ")
	}
	c.errorf(x.Pos(), "%s%s%s: rt.TiledMatrix has no field %s; %s", n.Name, op, x.Sel, x.Sel, hint)
}
