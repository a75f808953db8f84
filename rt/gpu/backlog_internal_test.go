package gpu

import "testing"

func TestBacklogCountsByPriority(t *testing.T) {
	var b backlog
	for _, p := range []int32{5, 1, 9, 5, -3} {
		b.add(p, 1)
	}
	for _, c := range []struct {
		p    int32
		want int64
	}{{10, 0}, {9, 1}, {6, 1}, {5, 3}, {0, 4}, {-3, 5}, {-100, 5}} {
		if got := b.atOrAbove(c.p); got != c.want {
			t.Errorf("atOrAbove(%d) = %d, want %d", c.p, got, c.want)
		}
	}
	b.add(5, -1)
	b.add(9, -1)
	if got := b.atOrAbove(5); got != 1 {
		t.Errorf("after removals, atOrAbove(5) = %d, want 1", got)
	}
	b.add(5, -1)
	b.add(1, -1)
	b.add(-3, -1)
	if len(b.c) != 0 {
		t.Errorf("empty backlog keeps %v", b.c)
	}
}
