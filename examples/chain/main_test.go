package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
)

func TestChain(t *testing.T) {
	for _, nb := range []int{0, 1, 500} {
		got, err := chain(nb, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range got {
			if v != float64(nb+1) {
				t.Fatalf("NB=%d: block %d = %v, want every element %d", nb, nb, got, nb+1)
			}
		}
	}
	var out bytes.Buffer
	if err := run([]string{"-nb", "3"}, &out); err != nil || !strings.Contains(out.String(), "[4 4]") {
		t.Errorf("run: %v, output %q", err, out.String())
	}
}

func TestChainArguments(t *testing.T) {
	data, _ := rt.NewVector(4, 1, 1, 0)
	if _, err := NewChain(-1, data); !errors.Is(err, ErrChainArgument) {
		t.Errorf("NewChain(-1, data): %v, want ErrChainArgument", err)
	}
	if _, err := NewChain(3, nil); !errors.Is(err, ErrChainArgument) {
		t.Errorf("NewChain(3, nil): %v, want ErrChainArgument", err)
	}
	if _, err := NewChain(3, &rt.Vector{}); !errors.Is(err, ErrChainArgument) {
		t.Errorf("NewChain(3, zero vector): %v, want ErrChainArgument", err)
	}
}
