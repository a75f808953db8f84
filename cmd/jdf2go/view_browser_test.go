package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// viewPageJS reads what the replay's page shows: the note, the progress bars, the segments
// the lanes painted and the status.
const viewPageJS = `(() => {
  const note = document.getElementById("note");
  return {
    note: note.hidden ? "" : note.textContent,
    bars: Array.from(document.querySelectorAll("#classes .bar")).map((b) => b.dataset.class),
    segments: window.dashboard.drawnSegments,
    status: document.getElementById("status").textContent,
  };
})()`

type viewPage struct {
	Note     string   `json:"note"`
	Bars     []string `json:"bars"`
	Segments int      `json:"segments"`
	Status   string   `json:"status"`
}

// The page of a trace that reached the replay's bounds says so: a headless Chromium loads
// jdf2go view's page for a trace of 100 classes and 2000 spans per worker, and shows 64
// classes and "(other classes)", lanes drawn from at most 1024 segments per worker, the note
// naming both bounds, the status finished, and no console error. It skips without Chromium,
// unless JDF2GO_REQUIRE_BROWSER=1.
func TestViewPageInBrowser(t *testing.T) {
	exe := ""
	for _, n := range []string{os.Getenv("JDF2GO_CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(n); n != "" && err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		if os.Getenv("JDF2GO_REQUIRE_BROWSER") == "1" {
			t.Fatal("no chromium found (JDF2GO_REQUIRE_BROWSER=1)")
		}
		t.Skip("no chromium found: install Debian's chromium to run the page's browser test")
	}
	const workers, spans, classes = 2, 2000, 100
	path := filepath.Join(t.TempDir(), "bounds.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprint(w, `{"traceEvents":[{"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"workers"}}`)
	for i := range workers {
		fmt.Fprintf(w, ",\n"+`{"ph":"M","name":"thread_name","pid":0,"tid":%d,"args":{"name":"worker %d"}}`, i, i)
	}
	for i := range workers * spans {
		fmt.Fprintf(w, ",\n"+`{"ph":"X","pid":0,"tid":%d,"ts":%d,"dur":80,"name":"C%d(%d)"}`, i%workers, 100*(i/workers), i%classes, i)
	}
	fmt.Fprint(w, "]}\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srvCtx, stopServing := context.WithCancel(ctx)
	urls, served := make(chan string, 1), make(chan error, 1)
	go func() {
		served <- serveTrace(srvCtx, &streams{out: io.Discard, err: io.Discard}, path, "localhost:0", false, func(u string) { urls <- u })
	}()
	defer func() {
		stopServing()
		if err := <-served; err != nil {
			t.Errorf("view: %v", err)
		}
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-served:
		t.Fatalf("view: %v", err)
	case <-ctx.Done():
		t.Fatal("view did not serve")
	}

	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(exe), chromedp.Headless,
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1000),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true))
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
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
				consoleErrs = append(consoleErrs, m.String())
				mu.Unlock()
			}
		}
	}()
	if err := chromedp.Do(bctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#chart"))); err != nil {
		t.Fatalf("loading %s in %s: %v", url, exe, err)
	}
	var page viewPage
	for page.Status != "finished" || page.Segments == 0 {
		if ctx.Err() != nil {
			t.Fatalf("the page did not show the finished replay: %+v", page)
		}
		time.Sleep(100 * time.Millisecond)
		if page, err = chromedp.Run(bctx, chromedp.Evaluate[viewPage](viewPageJS)); err != nil {
			t.Fatalf("reading the page: %v", err)
		}
	}
	if n := len(page.Bars); n != 65 || page.Bars[n-1] != "(other classes)" {
		t.Errorf("the page shows the classes %q: want 64 and (other classes)", page.Bars)
	}
	if page.Segments > workers*1024 {
		t.Errorf("the lanes painted %d segments, want at most %d", page.Segments, workers*1024)
	}
	for _, want := range []string{"more than 64 task classes", "one segment per"} {
		if !strings.Contains(page.Note, want) {
			t.Errorf("the page's note %q does not say %q", page.Note, want)
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
