package dashboard

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrPublic is returned by Listen for an address that is not a loopback address when
// Options.Public is not set: anyone who can reach such an address can watch the run.
var ErrPublic = errors.New("dashboard: non-loopback address needs the public opt-in")

//go:embed assets
var assets embed.FS

// Default history bounds, for pages that connect late: at most DefaultHistory snapshots of
// at most DefaultHistoryBytes encoded. Besides, a snapshot older than its Window keeps no
// lanes (a page shows none that old), so that a long run keeps its rates, not its lanes.
const (
	DefaultHistory      = 2400
	DefaultHistoryBytes = 32 << 20
)

// Options configure a Server.
type Options struct {
	Public       bool         // allow a non-loopback address (Listen then logs a warning)
	Log          *slog.Logger // default slog.Default()
	History      int          // snapshots kept (DefaultHistory when 0)
	HistoryBytes int          // bytes of encoded snapshots kept (DefaultHistoryBytes when 0; < 0: no bound)
}

// entry is one published snapshot: its encoding, and the snapshot itself while its lanes
// are still within its window.
type entry struct {
	seq  int64
	b    []byte
	snap *Snapshot
}

// Server serves the dashboard page, its assets, the snapshot stream (Server-Sent Events on
// /api/stream) and the same data as JSON (/api/snapshot, /api/history). It is read-only:
// every method but GET and HEAD is refused, and nothing it serves changes the run.
type Server struct {
	ln       net.Listener
	srv      *http.Server
	loopback bool
	served   chan struct{} // closed when Serve returned

	mu       sync.Mutex
	hist     []entry // oldest first
	bytes    int     // encoded bytes in hist
	trimmed  int     // hist[:trimmed] hold no lanes
	nextSeq  int64
	max      int
	maxBytes int
	changed  chan struct{} // closed and replaced on every Publish
	closed   bool
	done     chan struct{} // closed by Close: streams end
}

// Listen checks addr ("host:port"; an empty host means localhost), binds it and starts
// serving. A non-loopback host needs opt.Public; it then logs a warning.
func Listen(addr string, opt Options) (*Server, error) {
	log := opt.Log
	if log == nil {
		log = slog.Default()
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dashboard: address %q: %w", addr, err)
	}
	if host == "" {
		host = "localhost"
	}
	loopback := IsLoopback(host)
	if !loopback && !opt.Public {
		return nil, fmt.Errorf("%w: %q (bind to localhost, or opt in)", ErrPublic, addr)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	s := &Server{ln: ln, loopback: loopback, served: make(chan struct{}), max: opt.History,
		maxBytes: opt.HistoryBytes, nextSeq: 1, changed: make(chan struct{}), done: make(chan struct{})}
	if s.max <= 0 {
		s.max = DefaultHistory
	}
	if s.maxBytes == 0 {
		s.maxBytes = DefaultHistoryBytes
	}
	if !loopback {
		log.Warn("dashboard: serving on a non-loopback address: anyone who can reach it can watch the run",
			"addr", ln.Addr().String())
	}
	s.srv = &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	go func() {
		defer close(s.served)
		s.srv.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	return s, nil
}

// IsLoopback reports whether host is "localhost" or a loopback IP address. Other names
// are not resolved: they count as public.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// RankAddr returns the address rank serves on: addr's port plus rank (a port of 0 stays 0,
// each rank then picks a free port).
func RankAddr(addr string, rank int) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("dashboard: address %q: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p+rank > 65535 {
		return "", fmt.Errorf("dashboard: address %q: bad port for rank %d", addr, rank)
	}
	if p != 0 {
		p += rank
	}
	return net.JoinHostPort(host, strconv.Itoa(p)), nil
}

// Addr returns the address the server listens on (with the port chosen for port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns the page's address.
func (s *Server) URL() string { return "http://" + s.Addr() + "/" }

// Publish appends snap to the history and sends it to every connected page. It sets
// snap.Seq and keeps snap: the caller must not change it afterwards.
func (s *Server) Publish(snap *Snapshot) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	snap.Seq = s.nextSeq
	b, err := json.Marshal(snap)
	if err != nil {
		return fmt.Errorf("dashboard: encoding a snapshot: %w", err)
	}
	s.nextSeq++
	e := entry{seq: snap.Seq, b: b}
	if len(snap.Lanes) > 0 || len(snap.Running) > 0 {
		e.snap = snap
	}
	s.hist = append(s.hist, e)
	s.bytes += len(b)
	// Snapshots whose lanes left the window are encoded again without them.
	for ; s.trimmed < len(s.hist)-1; s.trimmed++ {
		old := s.hist[s.trimmed].snap
		if old == nil {
			continue
		}
		if old.Time >= snap.Time-snap.Window {
			break
		}
		bare := *old
		bare.Lanes, bare.Running = nil, nil
		if nb, err := json.Marshal(&bare); err == nil {
			s.bytes += len(nb) - len(s.hist[s.trimmed].b)
			s.hist[s.trimmed] = entry{seq: old.Seq, b: nb}
		}
	}
	drop := 0
	for len(s.hist)-drop > 1 && (len(s.hist)-drop > s.max || s.maxBytes > 0 && s.bytes > s.maxBytes) {
		s.bytes -= len(s.hist[drop].b)
		drop++
	}
	if drop > 0 {
		// A new array: streams may be reading the old one.
		s.hist = append([]entry(nil), s.hist[drop:]...)
		s.trimmed = max(s.trimmed-drop, 0)
	}
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

// Close stops the server: open streams end, then it stops listening.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, s.srv.Close())
	}
	<-s.served
	if err != nil {
		return fmt.Errorf("dashboard: close: %w", err)
	}
	return nil
}

// since returns the encoded snapshots published after seq and their sequence numbers, and a
// channel closed at the next Publish.
func (s *Server) since(seq int64) ([][]byte, []int64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := len(s.hist)
	for i > 0 && s.hist[i-1].seq > seq {
		i--
	}
	bs, seqs := make([][]byte, 0, len(s.hist)-i), make([]int64, 0, len(s.hist)-i)
	for _, e := range s.hist[i:] {
		bs, seqs = append(bs, e.b), append(seqs, e.seq)
	}
	return bs, seqs, s.changed
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets") // the embedded directory always exists
	files := http.FileServerFS(static)
	mux.Handle("/", files)
	mux.HandleFunc("/api/snapshot", s.serveSnapshot)
	mux.HandleFunc("/api/history", s.serveHistory)
	mux.HandleFunc("/api/stream", s.serveStream)
	return s.guard(mux)
}

// guard makes the server read-only and keeps other sites out: only GET and HEAD pass; on a
// loopback address the Host header must name a loopback host too, so that a page from
// elsewhere cannot read the data through a DNS name rebound to 127.0.0.1.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "read-only: only GET and HEAD", http.StatusMethodNotAllowed)
			return
		}
		if s.loopback {
			host := r.Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			if !IsLoopback(host) {
				http.Error(w, "forbidden host", http.StatusForbidden)
				return
			}
		}
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

func (s *Server) serveSnapshot(w http.ResponseWriter, r *http.Request) {
	hist, _, _ := s.since(-1)
	w.Header().Set("Content-Type", "application/json")
	if len(hist) == 0 {
		w.Write([]byte("null\n"))
		return
	}
	w.Write(hist[len(hist)-1])
	w.Write([]byte("\n"))
}

func (s *Server) serveHistory(w http.ResponseWriter, r *http.Request) {
	hist, _, _ := s.since(-1)
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte("["))
	for i, b := range hist {
		if i > 0 {
			w.Write([]byte(",\n"))
		}
		w.Write(b)
	}
	w.Write([]byte("]\n"))
}

// serveStream sends every kept snapshot newer than the Last-Event-ID header (all of them
// on a first connection), then each new one as it is published, as "snapshot" events.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	last := int64(-1)
	if v, err := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64); err == nil {
		last = v
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	if r.Method == http.MethodHead {
		return
	}
	// send writes the snapshots published after last; false when the client went away.
	send := func() (<-chan struct{}, bool) {
		hist, seqs, changed := s.since(last)
		for i, b := range hist {
			if _, err := fmt.Fprintf(w, "id: %d\nevent: snapshot\ndata: %s\n\n", seqs[i], b); err != nil {
				return nil, false
			}
			last = seqs[i]
		}
		if len(hist) > 0 {
			fl.Flush()
		}
		return changed, true
	}
	for {
		changed, ok := send()
		if !ok {
			return
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		case <-s.done:
			// Close comes after the last Publish: the page gets it before the end.
			if _, ok := send(); ok {
				fmt.Fprint(w, "event: end\ndata: {}\n\n")
				fl.Flush()
			}
			return
		}
	}
}
