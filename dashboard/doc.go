// Package dashboard is the live web page of a jdf2go run: the snapshot types, the HTTP server
// that streams them (Server-Sent Events on /api/stream, JSON on /api/snapshot and
// /api/history) and the embedded page (hand-written JS drawing on canvas; no CDN, no build
// step) that shows them. It uses the standard library only, so that both the runtime
// (rt.Dashboard samples a running program) and the compiler (jdf2go view replays a trace
// with FromTrace) serve the same page.
//
// The server is read-only: only GET and HEAD are served. Listen binds loopback addresses
// only, unless Options.Public opts in (ErrPublic otherwise); on a loopback address it also
// refuses requests whose Host header names another host, so that a web page elsewhere cannot
// read the data through a DNS name that resolves to 127.0.0.1.
package dashboard
