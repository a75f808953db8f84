package gpu

import (
	"sync"
	"testing"
)

// Producers push concurrently while the manager pops: every wrapper comes out exactly once,
// each producer's in the order it pushed them, and the count is never negative.
func TestPendingQueueConcurrentFIFO(t *testing.T) {
	const producers, each = 4, 20000
	var p pendingQueue
	p.init()
	ws := make([][]Task, producers)
	for i := range ws {
		ws[i] = make([]Task, each)
		for j := range ws[i] {
			ws[i][j].priority = int32(i)  // the producer
			ws[i][j].collected = int32(j) // its order
		}
	}
	var wg sync.WaitGroup
	for i := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ws[i] {
				p.push(&ws[i][j])
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	next := make([]int32, producers)
	seen := 0
	var buf []*Task
	for finished := false; seen < producers*each; {
		if p.len() < 0 {
			t.Fatal("negative count")
		}
		buf = p.tryPopN(buf[:0], 256)
		if len(buf) == 0 {
			if finished {
				t.Fatalf("%d of %d wrappers popped, the queue looks empty", seen, producers*each)
			}
			select {
			case <-done:
				finished = true // one more round: the last pushes are linked by now
			default:
			}
			continue
		}
		for _, w := range buf {
			i := w.priority
			if w.collected != next[i] {
				t.Fatalf("producer %d: got its wrapper %d, want %d", i, w.collected, next[i])
			}
			next[i]++
			seen++
		}
	}
	if got := p.tryPopN(nil, 1); len(got) != 0 || p.len() != 0 {
		t.Fatalf("after every wrapper: %d more popped, len %d", len(got), p.len())
	}
}
