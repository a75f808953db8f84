package remote

import (
	"fmt"
	"reflect"
	"testing"
)

// TestHeaderRoundTrip: every field survives encode and decode, and len is the encoded length.
func TestHeaderRoundTrip(t *testing.T) {
	for _, data := range []uint8{dataNone, dataEager} {
		h := header{kind: kindActivate, flow: 3, class: 513, tp: 70000, nparams: 3, data: data, typ: 2, root: 5,
			size: 1 << 33, trace: 1<<40 | 9, prio: -7, params: [8]int64{-1, 1 << 40, 7}, tree: []int32{5, 2, 9}}
		b := h.encode(nil)
		if len(b) != h.len() {
			t.Errorf("encoded %d bytes, len says %d", len(b), h.len())
		}
		var g header
		rest, err := g.decode(append(b, 1, 2))
		if err != nil || len(rest) != 2 {
			t.Fatalf("decode: %v, rest %v", err, rest)
		}
		if fmt.Sprint(g.tree) != fmt.Sprint(h.tree) {
			t.Errorf("tree %v, want %v", g.tree, h.tree)
		}
		g.tree, h.tree = nil, nil
		if !reflect.DeepEqual(g, h) {
			t.Errorf("decoded %+v, want %+v", g, h)
		}
	}
}
