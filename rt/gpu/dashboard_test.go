package gpu_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/dashboard"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/gpu"
)

// With the dashboard on, every device shows in the snapshots with the tasks it ran, its
// batches, its transfers and its streams.
func TestRTDeviceDashboard(t *testing.T) {
	const K, S, nb = 16, 4, 16
	devs, err := gpu.Open("sim:2", gpu.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, d := range devs {
			d.Close()
		}
	}()
	c, err := rt.New(rt.Workers(2), rt.Devices(gpu.RTDevices(devs)...), rt.Dashboard("localhost:0"),
		rt.Logger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, err := rt.NewVector(K*nb, nb, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	tp := rt.NewTaskpool("affine", &affine{K: K, S: S, V: v}, &affineT)
	if err := c.Add(tp); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tp.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	want := int64(K * ((S + 1) / 2))
	deadline := time.Now().Add(10 * time.Second)
	for {
		var s *dashboard.Snapshot
		resp, err := http.Get(c.DashboardURL() + "api/snapshot")
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if s != nil && len(s.GPUs) == 2 && s.GPUs[0].Executed+s.GPUs[1].Executed == want {
			for _, g := range s.GPUs {
				if g.Executed == 0 {
					continue
				}
				if g.StageIns == 0 || g.BytesIn < g.StageIns*nb*8 || g.BytesOut == 0 || g.Batches == 0 ||
					g.Batched < g.Executed || len(g.Streams) < 4 || g.Streams[0].Name != "pending" {
					t.Fatalf("device %+v: want transfers, batches and streams", g)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot with %d device tasks within 10 s; last %+v", want, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
