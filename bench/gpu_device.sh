#!/bin/sh
# gpu_device.sh: the GPU figures of the performance work on a GPU machine without Go, from
# the binaries that `make gpu-pack` puts in .gpu/ (run it from the directory holding .gpu/,
# or from .gpu/ itself):
#
#   the CUDA tests (rt/gpu/cuda);
#   the batching table: batch_gemm at NB 32, 64 and 128, batch 512 and batch 1, REPEAT
#   processes of RUNS timed runs each, the batched and unbatched processes alternating
#   (each prints its runs and their median);
#   cudabench's GEMM figures (batched and unbatched, median of RUNS runs);
#   cudabench's Cholesky against cuSOLVER at N=16384 (NB 512, 1024) and N=32768 (NB 1024),
#   resident and from host memory, median of RUNS runs;
#   the potrf example at N (16384), NB 512 and 1024, resident, REPEAT runs each.
#
# Environment: GPUS (cuda; sim:1 runs the example parts on the simulated device, for a
# try-out of the script, with a small N), N (16384), TASKS (100000), RUNS (5), REPEAT (2), OUT (a directory for the
# logs; default gpu-device-<date>), and JDF2GO_CUDA_LIBRARY_PATH when the CUDA libraries
# are outside the loader's path.
set -eu
B=${B:-.gpu}
[ -x "$B/batch_gemm" ] || B=$(dirname "$0") # the script may live in .gpu/ itself
GPUS=${GPUS:-cuda}
N=${N:-16384}
TASKS=${TASKS:-100000}
RUNS=${RUNS:-5}
REPEAT=${REPEAT:-2}
OUT=${OUT:-gpu-device-$(date +%Y%m%d-%H%M%S)}
CB=$B/github_com_jdf2go_jdf2go_bench_internal_cudabench.test
CT=$B/github_com_jdf2go_jdf2go_rt_gpu_cuda.test
mkdir -p "$OUT"
for f in batch_gemm potrf "$(basename "$CB")" "$(basename "$CT")"; do
	[ -x "$B/$f" ] || { echo "missing $B/$f: run make gpu-pack where Go is" >&2; exit 1; }
done
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
# keep writes the lines matching $1 to the summary; the whole output goes to $2.
keep() { tee -a "$OUT/$2" | grep -E "$1" | tee -a "$OUT/summary.txt" || true; }

uptime | tee -a "$OUT/summary.txt"
log "CUDA tests"
"$CT" -test.count=1 >"$OUT/cuda-tests.log" 2>&1 && echo "PASS" | tee -a "$OUT/summary.txt" ||
	{ tail -20 "$OUT/cuda-tests.log" | tee -a "$OUT/summary.txt"; }

i=1
while [ "$i" -le "$REPEAT" ]; do
	for nb in 32 64 128; do
		for batch in 512 1; do
			log "batch_gemm round $i: NB $nb, batch $batch, $RUNS runs of $TASKS tasks"
			"$B/batch_gemm" -gpus "$GPUS" -tasks "$TASKS" -runs "$RUNS" -check=false -nb "$nb" -batch "$batch" 2>&1 |
				keep "median|busy|run 1:" batch_gemm.log
		done
	done
	i=$((i + 1))
done

log "cudabench: GEMM tasks, batched and unbatched"
JDF2GO_BENCH_ONLY=gemm JDF2GO_BENCH_RUNS=$RUNS "$CB" -test.run GPUFigures -test.v 2>&1 | keep "FIGURE|SKIP" cudabench-gemm.log
log "cudabench: Cholesky against cuSOLVER"
JDF2GO_BENCH_ONLY=potrf JDF2GO_BENCH_RUNS=$RUNS JDF2GO_BENCH_POTRF=16384:512:1024,32768:1024 \
	"$CB" -test.run GPUFigures -test.v 2>&1 | keep "FIGURE|SKIP" cudabench-potrf.log

i=1
while [ "$i" -le "$REPEAT" ]; do
	for nb in 512 1024; do
		log "potrf example round $i: N=$N NB $nb, resident"
		"$B/potrf" -gpus "$GPUS" -share=false -resident -check=false -trace= -n "$N" -nb "$nb" 2>&1 |
			keep "factorisation|staged" potrf.log
	done
	i=$((i + 1))
done
echo "logs in $OUT/"
