// Package rttest provides task graphs of standard shapes written by hand exactly the way
// jdf2go's code generator writes them: a static rt.TaskClass per class plus small
// non-allocating functions. rt's tests and the benchmark driver run them; they also serve as
// the reference for what generated code looks like.
//
// Every constructor takes the body to run in each task (nil means an empty body) and
// returns a fresh *rt.Taskpool. The JDF each shape corresponds to is quoted above it.
//
// RandomSPD makes the reproducible symmetric positive definite matrices that the Cholesky
// tests factor.
package rttest
