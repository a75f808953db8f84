// Package jdfgen writes large JDF programs for the benchmarks of jdf2go gen (the gen suite of
// bench, cmd jdfgen): many small classes, each a chain of tasks over a data collection, so that
// the size of the program grows with the number of classes and nothing else.
package jdfgen

import (
	"fmt"
	"strings"
)

// Chains returns a valid program of about size bytes (at least one class): the globals NB
// and data, then chain-like classes T0, T1, ..., each with one parameter range, one RW flow
// that goes from data(k) through T<i>(0 .. NB) back to data(k), a priority and a body.
func Chains(size int) []byte {
	var b strings.Builder
	b.Grow(size + 512)
	b.WriteString("// Chains of tasks written by jdfgen.\n%option name = \"Chains\"\n\n")
	b.WriteString("NB [type = \"int\"]          // last task index\ndata [type = \"*rt.Vector\"] // NB+1 blocks\n\n")
	for i := 0; i == 0 || b.Len() < size; i++ {
		fmt.Fprintf(&b, `T%[1]d(k)
  k = 0 .. NB
  : data(k)
  RW A <- (k == 0) ? data(k) : A T%[1]d(k - 1)
       -> (k < NB) ? A T%[1]d(k + 1) : data(k)
  ; NB - k
BODY
{
    for i := range A {
        A[i] += %[2]d
    }
}
END

`, i, i%7+1)
	}
	return []byte(b.String())
}

// Ternaries returns a valid program of one class whose priority is a chain of n conditionals
// in else position (k == 0 ? 1 : k == 1 ? 2 : ... : 0), the shape whose generated code once
// took a time quadratic in n to build.
func Ternaries(n int) []byte {
	var b strings.Builder
	b.WriteString("// A chain of conditionals written by jdfgen.\n%option name = \"Ternaries\"\n\n")
	b.WriteString("NB [type = \"int\"]\ndata [type = \"*rt.Vector\"]\n\nT(k)\n  k = 0 .. NB\n  : data(k)\n  RW A <- data(k)\n       -> data(k)\n  ; ")
	for i := range n {
		fmt.Fprintf(&b, "k == %d ? %d : ", i, i+1)
	}
	b.WriteString("0\nBODY\n{\n    A[0] += 1\n}\nEND\n")
	return []byte(b.String())
}
