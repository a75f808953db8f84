package ce_test

import (
	"context"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/dashboard"
	"github.com/jdf2go/jdf2go/rt/ce"
)

// Fill reports per peer the messages and bytes each way, transfers included.
func TestEngineFillDashboard(t *testing.T) {
	const tag = ce.FirstUserTag
	w := ce.NewWorld(2)
	engines := w.Engines()
	got := make(chan struct{}, 1)
	for _, e := range engines {
		e.RegisterTag(tag, 64, func(*ce.Caller, ce.Rank, []byte) { got <- struct{}{} })
		var s dashboard.Snapshot
		if e.Fill(&s); s.CE != nil {
			t.Fatal("Fill before Start reported an engine")
		}
		if err := e.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	defer ce.CloseAll(context.Background(), engines...)
	c0, _ := engines[0].Attach(ce.RoleWorker, "w0")
	m, _ := c0.TryNewMsg(5)
	copy(m.Bytes(), "hello")
	if err := c0.SendAM(1, tag, m, nil); err != nil {
		t.Fatal(err)
	}
	<-got
	src, _ := c0.Register(ce.HostMem(make([]byte, 1000)))
	defer src.Release()
	c1, _ := engines[1].Attach(ce.RoleWorker, "w1")
	local, _ := c1.Register(ce.HostMem(make([]byte, 1000)))
	defer local.Release()
	done := make(chan error, 1)
	c1.Get(ce.Transfer{Local: local, Remote: src.Key(), Len: 1000}, func(_ *ce.Caller, err error) { done <- err })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var s0, s1 dashboard.Snapshot
		engines[0].Fill(&s0)
		engines[1].Fill(&s1)
		p0, p1 := s0.CE.Peers[0], s1.CE.Peers[0]
		if len(s0.CE.Peers) != 1 || p0.Rank != 1 || p1.Rank != 0 || s1.CE.Rank != 1 {
			t.Fatalf("peers %+v and %+v", s0.CE, s1.CE)
		}
		if p0.MsgsOut >= 1 && p0.BytesOut >= 1005 && p1.MsgsIn >= 1 && p1.BytesIn >= 1005 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rank 0 sees %+v, rank 1 sees %+v: want an AM of 5 bytes and a transfer of 1000 from 0 to 1", p0, p1)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
