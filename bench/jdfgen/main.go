// Command jdfgen writes a large JDF program for measuring jdf2go gen (bench/internal/jdfgen):
//
//	go run ./bench/jdfgen -size 5000000 > /tmp/chains.jdf
//	/usr/bin/time -v jdf2go gen -o /tmp/chains_jdf.go /tmp/chains.jdf
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/jdf2go/jdf2go/bench/internal/jdfgen"
)

func main() {
	size := flag.Int("size", 5_000_000, "size of the program in `bytes` (about)")
	flag.Parse()
	if _, err := os.Stdout.Write(jdfgen.Chains(*size)); err != nil {
		fmt.Fprintln(os.Stderr, "jdfgen:", err)
		os.Exit(1)
	}
}
