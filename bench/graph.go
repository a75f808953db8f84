package main

// graph is a task graph given by functions, the common input of the baselines. Tasks are
// numbered 0..n-1; nin(i) is the number of inputs of task i and succ(i, f) calls f for each
// successor (once per edge).
type graph struct {
	n    int
	nin  func(i int) int32
	succ func(i int, f func(j int))
}

// chainsGraph: m chains of n tasks; task c*n+k follows c*n+k-1.
func chainsGraph(m, n int) graph {
	return graph{n: m * n,
		nin: func(i int) int32 {
			if i%n == 0 {
				return 0
			}
			return 1
		},
		succ: func(i int, f func(int)) {
			if i%n != n-1 {
				f(i + 1)
			}
		}}
}

// gridGraph: an n×m wavefront; task i*m+j follows (i-1, j) and (i, j-1).
func gridGraph(n, m int) graph {
	return graph{n: n * m,
		nin: func(t int) int32 {
			var k int32
			if t/m > 0 {
				k++
			}
			if t%m > 0 {
				k++
			}
			return k
		},
		succ: func(t int, f func(int)) {
			if t%m < m-1 {
				f(t + 1)
			}
			if t/m < n-1 {
				f(t + m)
			}
		}}
}

// independentGraph: n tasks, no edges.
func independentGraph(n int) graph {
	return graph{n: n, nin: func(int) int32 { return 0 }, succ: func(int, func(int)) {}}
}

// fanGraph: task 0 → tasks 1..n → task n+1.
func fanGraph(n int) graph {
	return graph{n: n + 2,
		nin: func(i int) int32 {
			switch {
			case i == 0:
				return 0
			case i == n+1:
				return int32(n)
			}
			return 1
		},
		succ: func(i int, f func(int)) {
			switch {
			case i == 0:
				for j := 1; j <= n; j++ {
					f(j)
				}
			case i <= n:
				f(n + 1)
			}
		}}
}
