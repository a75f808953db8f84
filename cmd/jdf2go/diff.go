package main

import (
	"bytes"
	"fmt"
	"strings"
)

// unifiedDiff returns a unified diff (3 lines of context) from a to b, or
// nil when they are equal. It uses Myers' O(ND) algorithm on lines.
func unifiedDiff(name string, a, b []byte) []byte {
	x, y := splitLines(a), splitLines(b)
	ops := myers(x, y)
	if ops == nil {
		return nil
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "--- %s\n+++ %s (formatted)\n", name, name)
	const ctx = 3
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk runs from ctx lines before the change to ctx lines after
		// the last change that is at most 2*ctx lines further.
		start := max(i-ctx, 0)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j
			} else if j-end > 2*ctx {
				break
			}
		}
		end = min(end+ctx+1, len(ops))
		ax, by := ops[start].ax, ops[start].by
		var na, nb int
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				na++
			}
			if op.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", ax+1, na, by+1, nb)
		for _, op := range ops[start:end] {
			out.WriteByte(op.kind)
			out.WriteString(op.line)
			if !strings.HasSuffix(op.line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.Bytes()
}

type diffOp struct {
	kind   byte // ' ', '-', '+'
	line   string
	ax, by int // line index in a and b where the op applies
}

func splitLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

// myers returns the edit script from x to y, or nil when they are equal.
func myers(x, y []string) []diffOp {
	n, m := len(x), len(y)
	maxD := n + m
	v := make([]int, 2*maxD+2)
	var trace [][]int
	found := false
	for d := 0; d <= maxD && !found; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || (k != d && v[maxD+k-1] < v[maxD+k+1]) {
				i = v[maxD+k+1]
			} else {
				i = v[maxD+k-1] + 1
			}
			j := i - k
			for i < n && j < m && x[i] == y[j] {
				i++
				j++
			}
			v[maxD+k] = i
			if i >= n && j >= m {
				found = true
				break
			}
		}
	}
	if len(trace) == 1 {
		return nil // d = 0: equal
	}
	// Backtrack through the saved frontiers.
	var rev []diffOp
	i, j := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		vd := trace[d]
		k := i - j
		var prevK int
		if k == -d || (k != d && vd[maxD+k-1] < vd[maxD+k+1]) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevI := vd[maxD+prevK]
		prevJ := prevI - prevK
		for i > prevI && j > prevJ && d > 0 {
			i--
			j--
			rev = append(rev, diffOp{' ', x[i], i, j})
		}
		if d == 0 {
			for i > 0 && j > 0 {
				i--
				j--
				rev = append(rev, diffOp{' ', x[i], i, j})
			}
			break
		}
		if i == prevI {
			j--
			rev = append(rev, diffOp{'+', y[j], i, j})
		} else {
			i--
			rev = append(rev, diffOp{'-', x[i], i, j})
		}
	}
	for l, r := 0, len(rev)-1; l < r; l, r = l+1, r-1 {
		rev[l], rev[r] = rev[r], rev[l]
	}
	return rev
}
