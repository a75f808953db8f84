package dynamic_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/dynamic"
)

// TestScratchConcurrentBodies runs two bodies at once on two workers: each holds its scratch
// memory until the other has taken its own, so both hold memory at the same time, and the two
// must differ.
func TestScratchConcurrentBodies(t *testing.T) {
	_, g := newGraph(t)
	arrived := make(chan uintptr, 2)
	release := make(chan struct{})
	body := func(tk *dynamic.Task) error {
		s, err := tk.Scratch(64)
		if err != nil {
			return err
		}
		for i := range s {
			s[i] = float64(i)
		}
		arrived <- uintptr(unsafe.Pointer(&s[0]))
		select {
		case <-release:
		case <-time.After(10 * time.Second):
			return errors.New("the other body never ran: the two did not run at once")
		}
		for i := range s {
			if s[i] != float64(i) {
				return fmt.Errorf("scratch[%d] = %v, want %v: another body wrote it", i, s[i], float64(i))
			}
		}
		return nil
	}
	for range 2 {
		if err := g.Insert("HOLD", body); err != nil {
			t.Fatal(err)
		}
	}
	a, b := <-arrived, <-arrived
	close(release)
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Errorf("two bodies running at once got the same scratch memory (%#x)", a)
	}
}

// TestScratchReuse runs a chain of bodies, one at a time: every body after the first gets the
// memory of the one before, with what it wrote, and a larger request grows it.
func TestScratchReuse(t *testing.T) {
	_, g := newGraph(t)
	x, err := dynamic.Register(g, "x", make([]float64, 1))
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	addr := make([]uintptr, n)
	first := make([]float64, n)
	for i := range n {
		size := 16
		if i == n-1 {
			size = 1 << 12
		}
		err := g.Insert("CHAIN", func(tk *dynamic.Task) error {
			s, err := tk.Scratch(size)
			if err != nil {
				return err
			}
			if len(s) != size || cap(s) != size {
				return fmt.Errorf("Scratch(%d) has length %d and capacity %d", size, len(s), cap(s))
			}
			again, err := tk.Scratch(size / 2)
			if err != nil {
				return err
			}
			if &again[0] != &s[0] {
				return errors.New("a second call of one body returned other memory")
			}
			addr[i], first[i] = uintptr(unsafe.Pointer(&s[0])), s[0]
			s[0] = float64(i + 1)
			return nil
		}, dynamic.ReadWrite(x))
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < n-1; i++ {
		if addr[i] != addr[0] {
			t.Errorf("body %d got scratch memory %#x, want %#x as the first body", i, addr[i], addr[0])
		}
		if first[i] != float64(i) {
			t.Errorf("body %d found %v in its scratch memory, want %v left by the body before", i, first[i], float64(i))
		}
	}
}

// TestScratchOutsideBody keeps a Task past its body, and asks for a negative size: both fail
// with rt.ErrScratch.
func TestScratchOutsideBody(t *testing.T) {
	_, g := newGraph(t)
	kept := make(chan *dynamic.Task, 1)
	var negErr error
	err := g.Insert("KEEP", func(tk *dynamic.Task) error {
		_, negErr = tk.Scratch(-1)
		kept <- tk
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(negErr, rt.ErrScratch) {
		t.Errorf("Scratch(-1) = %v, want rt.ErrScratch", negErr)
	}
	if _, err := (<-kept).Scratch(8); !errors.Is(err, rt.ErrScratch) {
		t.Errorf("Scratch after the body returned = %v, want rt.ErrScratch", err)
	}
}
