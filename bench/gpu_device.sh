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
#   cudabench's Cholesky against cuSOLVER at the sizes of POTRF, resident and from host
#   memory, median of RUNS runs;
#   the potrf example at each N of NS and NB of NBS, resident, REPEAT runs each.
#
# Environment: PARTS (the parts to run, among tests, batch, gemm, potrf and example; all by
# default), GPUS (cuda; sim:1 runs the example parts on the simulated device, for a try-out
# of the script, with a small N), POTRF (16384:512:1024:2048,32768:512:1024:2048, as
# N:NB[:NB...] lists), NS (16384), NBS (512 1024), TASKS (100000), RUNS (5), REPEAT (2), OUT
# (a directory for the logs; default gpu-device-<date>), and JDF2GO_CUDA_LIBRARY_PATH when
# the CUDA libraries are outside the loader's path.
set -eu
B=${B:-.gpu}
[ -x "$B/batch_gemm" ] || B=$(dirname "$0") # the script may live in .gpu/ itself
GPUS=${GPUS:-cuda}
PARTS=${PARTS:-tests batch gemm potrf example}
POTRF=${POTRF:-16384:512:1024:2048,32768:512:1024:2048}
NS=${NS:-${N:-16384}}
NBS=${NBS:-512 1024}
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

# part succeeds when $1 is among PARTS.
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

uptime | tee -a "$OUT/summary.txt"
if part tests; then
	log "CUDA tests"
	"$CT" -test.count=1 >"$OUT/cuda-tests.log" 2>&1 && echo "PASS" | tee -a "$OUT/summary.txt" ||
		{ tail -20 "$OUT/cuda-tests.log" | tee -a "$OUT/summary.txt"; }
fi

i=1
part batch || i=$((REPEAT + 1))
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

if part gemm; then
	log "cudabench: GEMM tasks, batched and unbatched"
	JDF2GO_BENCH_ONLY=gemm JDF2GO_BENCH_RUNS=$RUNS "$CB" -test.run GPUFigures -test.v 2>&1 | keep "FIGURE|SKIP" cudabench-gemm.log
fi
if part potrf; then
	log "cudabench: Cholesky against cuSOLVER"
	JDF2GO_BENCH_ONLY=potrf JDF2GO_BENCH_RUNS=$RUNS JDF2GO_BENCH_POTRF=$POTRF \
		"$CB" -test.run GPUFigures -test.v 2>&1 | keep "FIGURE|SKIP|FAIL|Error" cudabench-potrf.log
fi

i=1
part example || i=$((REPEAT + 1))
while [ "$i" -le "$REPEAT" ]; do
	for n in $NS; do
		for nb in $NBS; do
			log "potrf example round $i: N=$n NB $nb, resident"
			"$B/potrf" -gpus "$GPUS" -share=false -resident -check=false -trace= -n "$n" -nb "$nb" 2>&1 |
				keep "factorisation|staged" potrf.log
		done
	done
	i=$((i + 1))
done
echo "logs in $OUT/"
