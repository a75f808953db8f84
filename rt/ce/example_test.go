package ce_test

import (
	"context"
	"fmt"

	"github.com/jdf2go/jdf2go/rt/ce"
)

// Two in-process ranks: rank 0's device manager sends an active message, rank 1's worker
// fetches a registered buffer from rank 0 with a Get.
func ExampleNewWorld() {
	const tagHello, tagFetched = ce.FirstUserTag, ce.FirstUserTag + 1
	w := ce.NewWorld(2)
	engines := w.Engines()
	got := make(chan string, 2)
	for _, e := range engines {
		// Symmetric registration: every rank registers the same tags.
		e.RegisterTag(tagHello, 64, func(_ *ce.Caller, src ce.Rank, payload []byte) {
			got <- fmt.Sprintf("rank 1 got %q from rank %d", payload, src) // copy: payload is the transport's
		})
		e.RegisterTag(tagFetched, 8, func(_ *ce.Caller, src ce.Rank, note []byte) {
			got <- fmt.Sprintf("rank 0 notified: rank %d fetched %q", src, note)
		})
		if err := e.Start(context.Background()); err != nil {
			panic(err)
		}
	}
	ctx := context.Background()

	// Rank 0, a device manager: TryNewMsg never waits; SendAM takes the message.
	dm, _ := engines[0].Attach(ce.RoleDeviceManager, "gpu0")
	m, _ := dm.TryNewMsg(5)
	copy(m.Bytes(), "hello")
	dm.SendAM(1, tagHello, m, nil)
	fmt.Println(<-got)

	// Rank 0 registers a buffer; its key travels to rank 1 (here: directly).
	owner, _ := engines[0].Attach(ce.RoleWorker, "w0")
	src, _ := owner.Register(ce.HostMem([]byte("tile(3,4)")))

	// Rank 1, a worker, reads it; rank 0's handler for tagFetched runs when its side is done.
	worker, _ := engines[1].Attach(ce.RoleWorker, "w1")
	dst := make([]byte, 9)
	local, _ := worker.Register(ce.HostMem(dst))
	done := make(chan error, 1)
	worker.Get(ce.Transfer{Local: local, Remote: src.Key(), Len: 9, Notify: tagFetched, Note: []byte("3,4")},
		func(_ *ce.Caller, err error) { done <- err })
	fmt.Println(<-done, string(dst))
	fmt.Println(<-got)

	local.Release()
	src.Release()
	fmt.Println(ce.CloseAll(ctx, engines...))
	// Output:
	// rank 1 got "hello" from rank 0
	// <nil> tile(3,4)
	// rank 0 notified: rank 1 fetched "3,4"
	// <nil>
}
