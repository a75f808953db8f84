package remote_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/jdf2go/jdf2go/dashboard"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/remote"
)

// TestDashboardShowsPeers: with the dashboard on, each rank's page shows its engine's
// traffic per peer (Job.Context registers the Node's engine as a provider).
func TestDashboardShowsPeers(t *testing.T) {
	c := runCase{ranks: 2, n: 7, j: 9, nb: 8, failAt: -1,
		rt: []rt.Option{rt.Dashboard("localhost:0"), rt.Logger(slog.New(slog.DiscardHandler))}}
	c.after = func(j *remote.Job) error {
		ctx, err := j.Context()
		if err != nil {
			return err
		}
		url := ctx.DashboardURL()
		if url == "" {
			return fmt.Errorf("rank %d: no dashboard", j.Rank)
		}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			var s dashboard.Snapshot
			if err := getJSON(url+"api/snapshot", &s); err != nil {
				return err
			}
			if s.CE == nil || s.CE.Rank != j.Rank {
				continue
			}
			for _, p := range s.CE.Peers {
				if p.Rank == 1-j.Rank && p.MsgsOut+p.MsgsIn > 0 && p.BytesOut+p.BytesIn > 0 {
					return nil
				}
			}
		}
		return fmt.Errorf("rank %d: no snapshot shows traffic with the other rank", j.Rank)
	}
	if err := runProg(t, c, nil); err != nil {
		t.Fatal(err)
	}
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
