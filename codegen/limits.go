package codegen

// Limits of rt's task-class descriptor that generated code must respect. Codegen keeps its
// own copy so that the compiler does not link the runtime; a test in rt (limits_test.go)
// fails when the two disagree.
const (
	// MaxLocals is rt.MaxLocals: definition slots (parameters and derived locals) of a class.
	MaxLocals = 20
	// MaxFlows is rt.MaxFlows: flows of a class, data and CTL together.
	MaxFlows = 20
	// MaxParams is rt.MaxParams: parameters of a class.
	MaxParams = 8
	// MaxIndex is rt.MaxIndex: coordinates of a collection element.
	MaxIndex = 4
)
