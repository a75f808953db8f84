// Package gpubench holds the benchmarks of the GPU manager on simulated
// devices that the benchmark driver's gpu and gpu-nexttask suites run:
// Throughput (what the manager spends per task, and what batching saves) and
// NextTask (CPU successors of GPU tasks picked up by other workers while a
// manager runs).
package gpubench
