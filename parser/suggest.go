package parser

import "fmt"

// suggest returns ` (did you mean "X"?)` for the candidate closest to name,
// or "" when none is close enough: an edit distance of at most a third of
// the name's length (at least 1), or a case-insensitive match.
func suggest(name string, candidates []string) string {
	best, bestD := "", 1<<30
	limit := max(1, len(name)/3)
	for _, c := range candidates {
		if c == name || c == "" {
			continue
		}
		d := editDistance(name, c)
		if upper(c) == upper(name) {
			d = 0
		}
		if d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > limit {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the optimal-string-alignment distance between a and b
// (Levenshtein plus adjacent transpositions, so "nmae" is 1 from "name").
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 20 // long names are never suggested; keeps the cost bounded
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1) // transposition
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
