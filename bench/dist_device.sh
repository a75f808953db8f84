#!/bin/sh
# dist_device.sh: the distributed figures on a many-core machine without Go, from the
# binaries that `make dist-pack` puts in .gpu/ (run it from the directory holding .gpu/):
#
#   potrf N=16384, NB 320 and 512, CPU only: 1 rank x 16 workers, then 2 ranks x 8 and
#   4 ranks x 4 under mpirun (the same MPI binary, one rank per process), twice each,
#   interleaved; then one 4-rank run with the residual check at N=4096;
#   examples/pingpong under mpirun: the CE's 8-byte latency (raw MPI, direct, shifted) and
#   4 MiB bandwidth.
#
# Environment: N (16384), WORKERS (16), REPEAT (2), MPIRUN (mpirun --allow-run-as-root
# --bind-to none), OUT (a directory for the logs; default dist-device-<date>).
set -eu
B=${B:-.gpu}
[ -x "$B/potrf-mpi" ] || B=$(dirname "$0") # the script may live in .gpu/ itself
N=${N:-16384}
WORKERS=${WORKERS:-16}
REPEAT=${REPEAT:-2}
MPIRUN=${MPIRUN:-mpirun --allow-run-as-root --bind-to none}
OUT=${OUT:-dist-device-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
for f in potrf-mpi pingpong-mpi; do
	[ -x "$B/$f" ] || { echo "missing $B/$f: run make dist-pack where Go is" >&2; exit 1; }
done
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
common="-n $N -gpus none -trace= -verify=false -check=false"
i=1
while [ "$i" -le "$REPEAT" ]; do
	for nb in 320 512; do
		log "run $i NB=$nb: 1 rank x $WORKERS workers (mpirun -np 1)"
		$MPIRUN -np 1 "$B/potrf-mpi" $common -nb "$nb" -workers "$WORKERS" 2>&1 | tee -a "$OUT/potrf.log" | grep -E "factorisation|ranks" | tee -a "$OUT/summary.txt"
		log "run $i NB=$nb: 2 ranks x $((WORKERS / 2)) workers, grid 1x2"
		$MPIRUN -np 2 "$B/potrf-mpi" $common -nb "$nb" -workers $((WORKERS / 2)) -P 1 2>&1 | tee -a "$OUT/potrf.log" | grep -E "factorisation|ranks" | tee -a "$OUT/summary.txt"
		log "run $i NB=$nb: 4 ranks x $((WORKERS / 4)) workers, grid 2x2"
		$MPIRUN -np 4 "$B/potrf-mpi" $common -nb "$nb" -workers $((WORKERS / 4)) -P 2 2>&1 | tee -a "$OUT/potrf.log" | grep -E "factorisation|ranks" | tee -a "$OUT/summary.txt"
	done
	i=$((i + 1))
done
log "check: 4 ranks x $((WORKERS / 4)) workers, N=4096 NB=320, residual"
$MPIRUN -np 4 "$B/potrf-mpi" -n 4096 -nb 320 -gpus none -trace= -workers $((WORKERS / 4)) -P 2 2>&1 | tee -a "$OUT/potrf.log" | grep -E "factorisation|‖" | tee -a "$OUT/summary.txt"
log "pingpong: CE over MPI, 2 ranks"
$MPIRUN -np 2 "$B/pingpong-mpi" -runs 5 2>&1 | tee -a "$OUT/pingpong.log" | tee -a "$OUT/summary.txt"
echo "logs in $OUT/"
