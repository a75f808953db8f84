package codegen

import "github.com/jdf2go/jdf2go/parser"

// Limits of rt's task-class descriptor that generated code must respect. Codegen keeps its
// own copy so that the compiler does not link the runtime; a test in rt (limits_test.go)
// fails when the two disagree. The checker reports classes past the first three.
const (
	// MaxLocals is rt.MaxLocals: definition slots (parameters and derived locals) of a class.
	MaxLocals = parser.MaxLocals
	// MaxFlows is rt.MaxFlows: flows of a class, data and CTL together.
	MaxFlows = parser.MaxFlows
	// MaxParams is rt.MaxParams: parameters of a class.
	MaxParams = parser.MaxParams
	// MaxIndex is rt.MaxIndex: coordinates of a collection element.
	MaxIndex = parser.MaxIndex
)
