package main

import (
	"sync"
	"sync/atomic"
)

// body is the empty task body every variant calls through a function value.
var body = func(int) {}

// runGoroutines is the naive baseline: one goroutine per task, started up front, waiting on
// a buffered channel for as many tokens as it has inputs; a WaitGroup joins them.
func runGoroutines(g graph) {
	in := make([]chan struct{}, g.n)
	for i := range in {
		if k := g.nin(i); k > 0 {
			in[i] = make(chan struct{}, k)
		}
	}
	var wg sync.WaitGroup
	wg.Add(g.n)
	for i := 0; i < g.n; i++ {
		go func() {
			defer wg.Done()
			for k := g.nin(i); k > 0; k-- {
				<-in[i]
			}
			body(i)
			g.succ(i, func(j int) { in[j] <- struct{}{} })
		}()
	}
	wg.Wait()
}

// runPool is the minimal worker pool: a channel of ready task ids, an atomic counter of
// missing inputs per task, and the first successor that becomes ready run directly by the
// worker that released it. The worker that completes the last task closes the channel.
func runPool(g graph, workers int) {
	missing := make([]atomic.Int32, g.n)
	ready := make(chan int32, g.n)
	for i := 0; i < g.n; i++ {
		k := g.nin(i)
		missing[i].Store(k)
		if k == 0 {
			ready <- int32(i)
		}
	}
	if g.n == 0 {
		return
	}
	var done atomic.Int64
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			defer wg.Done()
			for id := range ready {
				for cur := int(id); cur >= 0; {
					body(cur)
					next := -1
					g.succ(cur, func(j int) {
						if missing[j].Add(-1) == 0 {
							if next < 0 {
								next = j
							} else {
								ready <- int32(j)
							}
						}
					})
					if done.Add(1) == int64(g.n) {
						close(ready)
					}
					cur = next
				}
			}
		}()
	}
	wg.Wait()
}
