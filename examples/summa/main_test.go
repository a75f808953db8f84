package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/jdf2go/jdf2go/rt/ce"
	"github.com/jdf2go/jdf2go/rt/remote"
)

// TestSumma: on 1 to 4 in-process ranks (uneven grids, ragged tiles, both broadcast trees,
// tiles inside messages and by Get) the product equals the 1-rank product bit for bit.
func TestSumma(t *testing.T) {
	s := shape{m: 100, n: 70, k: 90, nb: 32, p: 1}
	want, err := s.gemm(remote.Config{Workers: 1})
	if err != nil || want.relErr > 1e-12 {
		t.Fatalf("1 rank: %v, relative error %g", err, want.relErr)
	}
	for ranks := 2; ranks <= 4; ranks++ {
		for p := 1; p <= ranks; p++ {
			for _, tree := range []remote.Tree{remote.Star, remote.Binomial} {
				s.p = p
				name := fmt.Sprintf("%d ranks, P=%d, %v", ranks, p, tree)
				cfg := remote.Config{Ranks: ranks, Workers: ranks, CE: []ce.Option{ce.Debug(true)},
					Remote: []remote.Option{remote.Broadcast(tree), remote.Eager(4 << 10)}} // 32x32 tiles: 8 KiB, by Get
				got, err := s.gemm(cfg)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for i := range want.c {
					if got.c[i] != want.c[i] {
						t.Fatalf("%s: C[%d] = %g, 1 rank gives %g", name, i, got.c[i], want.c[i])
					}
				}
			}
		}
	}
}

func TestSummaCommand(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-m", "64", "-n", "64", "-k", "64", "-nb", "16", "-ranks", "3", "-P", "1"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "on 3 ranks (grid 1x3)") {
		t.Errorf("output: %s", out.String())
	}
}
