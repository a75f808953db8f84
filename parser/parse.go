package parser

// The exported entry points of the front end.

import (
	"bytes"
	"fmt"
	"os"
)

// Parse parses one JDF file. It always returns a Program, partial when there
// are syntax errors, and the sorted diagnostics of scanning and parsing.
// filename is used in positions only.
func Parse(filename string, src []byte) (*Program, ErrorList) {
	// A UTF-8 byte order mark is not part of the text; positions count
	// from after it, as editors show the file.
	return parse(filename, bytes.TrimPrefix(src, []byte("\xef\xbb\xbf")))
}

// ParseAndCheck parses src and, when it has no syntax error, checks it.
// The diagnostics of both passes are returned together, sorted. The program
// is ready for codegen when diags.Err() is nil.
func ParseAndCheck(filename string, src []byte) (*Program, ErrorList) {
	return ParseAndCheckWith(filename, src, CheckOptions{})
}

// ParseAndCheckWith is ParseAndCheck with the options of the check.
func ParseAndCheckWith(filename string, src []byte, opts CheckOptions) (*Program, ErrorList) {
	prog, diags := Parse(filename, src)
	if diags.HasErrors() {
		return prog, diags
	}
	diags = append(diags, CheckWith(prog, opts)...)
	diags.Sort()
	return prog, diags
}

// LoadFile reads, parses and checks the file at path. The error is non-nil
// only when the file cannot be read; JDF problems are in the ErrorList.
func LoadFile(path string) (*Program, ErrorList, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("jdf2go: %w", err)
	}
	prog, diags := ParseAndCheck(path, src)
	return prog, diags, nil
}
