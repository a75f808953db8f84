// Command jdf2go is the JDF front end and compiler driver.
//
// Usage:
//
//	jdf2go check [-Werror] FILE...     parse and check; print diagnostics
//	jdf2go fmt [-w|-l|-d] FILE...      print in canonical layout
//	jdf2go graph FILE                  print the task-class graph as DOT
//	jdf2go version                     print the version
//
// Diagnostics go to standard error in the Go compiler's form,
//
//	potrf.jdf:12:5: error: unknown task class "SYRKK" (did you mean "SYRK"?)
//
// Exit status: 0 on success, 1 when diagnostics include an error (or a
// warning under -Werror) or a file cannot be read or written, 2 on a usage
// error (unknown command or flag, missing argument).
//
// check parses and checks each file (jdf-language.md Part B §5 and the
// Part A rules). Bodies and code blocks are opaque, so PaRSEC files with C
// bodies check too. -Werror (also --Werror) makes warnings fail.
//
// fmt prints each file in canonical layout on standard output. With -w it
// rewrites the files that change, with -l it lists them, with -d it prints
// a unified diff. Formatting keeps comments, is idempotent, and never
// changes what the file means.
//
// graph prints the task-class graph in Graphviz DOT: one node per task
// class, one box per data collection, one labelled edge per output
// dependency (FLOW -> FLOW), dashed for CTL flows.
//
// Subcommands are registered by the file that defines them (see
// register in root.go), so adding one is a one-file change.
package main
