// Command jdf2go is the JDF front end and compiler driver: it checks, formats, draws and
// compiles JDF task-graph programs to Go, and starts a new one.
//
//	jdf2go new NAME                    write NAME.jdf and a main.go that generates and runs it
//	jdf2go gen [flags] FILE.jdf        generate Go
//	jdf2go check [flags] FILE...       parse and check; print diagnostics
//	jdf2go fmt [flags] FILE...         print in canonical layout
//	jdf2go graph FILE                  print the task-class graph as DOT
//	jdf2go view [--summary] TRACE.json serve the dashboard of a finished run (or print its totals)
//	jdf2go version                     print the version
//
// `jdf2go help COMMAND` prints a command's usage and flags; each command's text lives
// with its definition (one file per command, registered from its init function with
// register in root.go), and the flags are cobra's (pflag). Long flags may also be written
// with one dash, as in Go's tools (-pkg, -Werror): goStyleLongFlags in root.go.
package main
