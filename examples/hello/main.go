// Command hello runs examples/hello.jdf: one task per block of a vector, each
// printing a line.
//
//	go run ./examples/hello -n 8
package main

//go:generate go run github.com/jdf2go/jdf2go/cmd/jdf2go gen -o hello_jdf.go ../hello.jdf

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/jdf2go/jdf2go/rt"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "hello:", err)
		os.Exit(1)
	}
}

// lockedWriter serialises the tasks' writes.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("hello", flag.ContinueOnError)
	n := fs.Int("n", 4, "number of tasks")
	workers := fs.Int("workers", 0, "workers (0: all cores)")
	fs.Func("dashboard", "serve a live dashboard of the run on `ADDR` (localhost:8080; same as $JDF2GO_DASHBOARD)", func(a string) error { return os.Setenv("JDF2GO_DASHBOARD", a) })
	if err := fs.Parse(args); err != nil {
		return err
	}
	var opts []rt.Option
	if *workers > 0 {
		opts = append(opts, rt.Workers(*workers))
	}
	ctx, err := rt.New(opts...)
	if err != nil {
		return err
	}
	defer ctx.Close()
	data, err := rt.NewVector(*n, 1, 1, 0)
	if err != nil {
		return err
	}
	tp, err := NewHello(*n, data, &lockedWriter{w: stdout})
	if err != nil {
		return err
	}
	if err := ctx.Add(tp.Taskpool); err != nil {
		return err
	}
	return tp.Wait(context.Background())
}
