package main

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jdf2go/jdf2go/examples/potrf/cholesky"
	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/blas"
	"github.com/jdf2go/jdf2go/rt/gpu"
)

var browserN = flag.Int("browser-n", 1536, "matrix size of TestDashboardInBrowser's potrf (tiles of 96)")

var screenshot = flag.String("screenshot", "", "where TestDashboardInBrowser writes its PNG screenshot (default: a temporary directory)")

// browser finds a Chromium or Chrome executable ($JDF2GO_CHROMIUM first). Without one the
// test skips, unless JDF2GO_REQUIRE_BROWSER=1 (CI) makes it fail.
func browser(t *testing.T) string {
	t.Helper()
	names := []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"}
	if p := os.Getenv("JDF2GO_CHROMIUM"); p != "" {
		names = append([]string{p}, names...)
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	msg := "no chromium found (tried $JDF2GO_CHROMIUM, " + strings.Join(names[len(names)-5:], ", ") +
		"): install Debian's chromium to run the dashboard's browser test"
	if os.Getenv("JDF2GO_REQUIRE_BROWSER") == "1" {
		t.Fatal(msg + " (JDF2GO_REQUIRE_BROWSER=1)")
	}
	t.Skip(msg)
	return ""
}

// pageJS reads what the page drew: the progress bars' percentages, the number of points and
// segments the chart and lanes painted, and how many of their pixels are coloured (the
// axes, grid and empty lanes are grey).
const pageJS = `(() => {
  const colored = (id) => {
    const c = document.getElementById(id);
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] > 0 && Math.abs(d[i] - d[i + 1]) + Math.abs(d[i + 1] - d[i + 2]) > 60) n++;
    }
    return n;
  };
  return {
    bars: Array.from(document.querySelectorAll("#classes .bar")).map((b) => [b.dataset.class, Number(b.dataset.pct)]),
    points: window.dashboard.drawnPoints,
    segments: window.dashboard.drawnSegments,
    chartPixels: colored("chart"),
    lanePixels: colored("lanes"),
    gpus: document.querySelectorAll("#gpus .gpu").length,
    status: document.getElementById("status").textContent,
  };
})()`

type pageState struct {
	Bars        [][2]any `json:"bars"`
	Points      int      `json:"points"`
	Segments    int      `json:"segments"`
	ChartPixels int      `json:"chartPixels"`
	LanePixels  int      `json:"lanePixels"`
	GPUs        int      `json:"gpus"`
	Status      string   `json:"status"`
}

// complete reports whether the four classes' bars are at 100 %
// and the chart and the lanes show data.
func (s *pageState) complete() bool {
	if len(s.Bars) != 4 {
		return false
	}
	for _, b := range s.Bars {
		if pct, _ := b[1].(float64); pct != 100 {
			return false
		}
	}
	return s.Points >= 2 && s.Segments > 0 && s.ChartPixels > 0 && s.LanePixels > 0
}

// The dashboard in a real browser: a headless Chromium loads the page, then a potrf runs on
// two workers and a simulated GPU; the page's progress bars reach 100 %, its throughput chart
// and worker lanes draw data, its GPU panel shows the device, and the console stays free of
// errors; once the Context closes it shows the run finished. The test saves a screenshot
// (-screenshot PATH).
func TestDashboardInBrowser(t *testing.T) {
	exe := browser(t)
	impl, err := blas.Select("auto")
	if err != nil {
		t.Fatal(err)
	}
	devs, err := gpu.Open("sim:1")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, d := range devs {
			d.Close()
		}
	}()
	c, err := rt.New(rt.Workers(2), rt.Devices(gpu.RTDevices(devs)...), rt.Dashboard("localhost:0"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := cholesky.NewProblem(*browserN, 96, 1)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(exe), chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1000),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true))
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()

	// Subscribe before the page loads, so that no message is lost.
	messages := chromedp.Console(bctx)
	var mu sync.Mutex
	var consoleErrs []string
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				consoleErrs = append(consoleErrs, m.String()+" ("+m.URL+")")
				mu.Unlock()
			}
		}
	}()
	if err := chromedp.Do(bctx, chromedp.Navigate(c.DashboardURL()), chromedp.WaitVisible(chromedp.CSS("#chart"))); err != nil {
		t.Fatalf("loading %s in %s: %v", c.DashboardURL(), exe, err)
	}

	factored := make(chan error, 1)
	go func() { factored <- cholesky.Factor(ctx, c, p.A, impl) }()
	var st pageState
	deadline := time.Now().Add(45 * time.Second)
	for !st.complete() {
		if time.Now().After(deadline) {
			t.Fatalf("the page did not show the finished run within 45 s: %+v", st)
		}
		time.Sleep(200 * time.Millisecond)
		if st, err = chromedp.Run(bctx, chromedp.Evaluate[pageState](pageJS)); err != nil {
			t.Fatalf("reading the page: %v", err)
		}
	}
	if err := <-factored; err != nil {
		t.Fatalf("potrf: %v", err)
	}
	if st.GPUs != 1 || st.Status != "live" {
		t.Fatalf("page %+v: want one GPU panel and the status live", st)
	}
	t.Logf("page: %+v", st)

	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := *screenshot
	if path == "" {
		path = filepath.Join(t.TempDir(), "dashboard.png")
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))

	// Closing the Context publishes a last snapshot, marked finished, and ends the stream.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for st.Status != "finished" {
		if time.Now().After(deadline) {
			t.Fatalf("the page did not show the end of the run: status %q", st.Status)
		}
		time.Sleep(100 * time.Millisecond)
		if st, err = chromedp.Run(bctx, chromedp.Evaluate[pageState](pageJS)); err != nil {
			t.Fatalf("reading the page: %v", err)
		}
	}
	cancelBrowser()
	<-readDone
	mu.Lock()
	defer mu.Unlock()
	if len(consoleErrs) > 0 {
		t.Fatalf("the browser console reported errors:\n%s", strings.Join(consoleErrs, "\n"))
	}
}
