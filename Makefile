# jdf2go: build, test, fuzz, benchmark and demo entry points.
# `make demo` and `make test` are the two commands README starts with.

GO       ?= go
MPIRUN   ?= mpirun --allow-run-as-root --oversubscribe --bind-to none
FUZZTIME ?= 60s
# Citations of design notes that are not in the repository; docs/ holds the documentation.
NOTE_CITATIONS = (jdf-language|gpu-manager|ARCHITECTURE|STYLE|benchmarks|dist)\.md|(^|[^/a-z])ce\.md|design notes?\b|§ ?[0-9]
# Packages whose tests also run under the race detector (gpubench: the next_task
# manager test that drives rt/gpu through its harness).
RACE_PKGS = ./rt/... ./bench/internal/gpubench

.PHONY: gpu-pack dist-pack all build test test-unit test-race test-cpu1 test-mpi lint fuzz bench demo generate check-generate clean soak

all: build

build:
	$(GO) build ./...

## test: lint, unit tests, race tests of the runtime, the runtime at GOMAXPROCS 1, generated files up to date, MPI tests when mpirun exists.
test: lint test-unit test-race test-cpu1 check-generate
	@if command -v mpirun >/dev/null 2>&1 && [ -d rt/ce/mpi ]; then $(MAKE) --no-print-directory test-mpi; \
	else echo "test-mpi: skipped (no mpirun or no rt/ce/mpi)"; fi

test-unit:
	$(GO) test -count=1 ./...

test-race:
	$(GO) test -race -count=1 $(RACE_PKGS)
	$(GO) test -race -count=1 -run 'Dist|Summa|Geqrf' ./examples/potrf ./examples/stencil1d ./examples/summa ./examples/geqrf

## test-cpu1: the runtime's tests once more at GOMAXPROCS 1 (-short skips the slow ones).
test-cpu1:
	$(GO) test -short -cpu 1 -count=1 ./rt/...

## test-mpi: the MPI transport and potrf (residual check) under mpirun with 2 and 4 ranks, summa with 3, dynamic graphs with 2 and 3,
## and a rank killed mid-run under mpirun --enable-recovery (the test starts mpirun itself) (build tag mpi, cgo, Open MPI).
test-mpi:
	JDF2GO_MPIRUN="$(MPIRUN)" $(GO) test -tags mpi -count=1 -run TestMPIPeerLoss ./rt/remote/
	$(GO) test -tags mpi -count=1 -exec "$(MPIRUN) -x JDF2GO_CE_MPI_LEVEL=funneled -np 2" ./rt/ce/mpi/
	$(GO) test -tags mpi -count=1 -exec "$(MPIRUN) -np 4" ./rt/ce/mpi/
	$(GO) test -tags mpi -count=1 -run TestMPI -exec "$(MPIRUN) -np 2" ./rt/dynamic/
	$(GO) test -tags mpi -count=1 -run TestMPI -exec "$(MPIRUN) -np 3" ./rt/dynamic/
	@d=$$(mktemp -d) && $(GO) build -tags mpi -o $$d/potrf ./examples/potrf && $(GO) build -tags mpi -o $$d/summa ./examples/summa && \
	for np in 2 4; do echo "mpirun -np $$np potrf -P 2"; \
	$(MPIRUN) -np $$np $$d/potrf -P 2 -n 768 -nb 96 -workers 1 -trace "" -verify=false || { rm -rf $$d; exit 1; }; done; \
	echo "mpirun -np 3 summa -P 1"; $(MPIRUN) -np 3 $$d/summa -P 1 -m 200 -n 150 -k 100 -nb 32 -workers 1 || { rm -rf $$d; exit 1; }; rm -rf $$d

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null; git ls-files --others --exclude-standard '*.go' 2>/dev/null)); \
	if [ -n "$$out" ]; then echo "gofmt -l lists:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@if pkg-config --exists ompi-c 2>/dev/null; then $(GO) vet -tags mpi ./rt/ce/... ./rt/remote ./rt/dynamic ./examples/pingpong ./examples/potrf; fi
	@out=$$($(GO) run ./cmd/jdf2go fmt -l examples/*.jdf); \
	if [ -n "$$out" ]; then echo "jdf2go fmt -l lists (run jdf2go fmt -w, then make generate):"; echo "$$out"; exit 1; fi
	@$(GO) mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }
	@out=$$(git grep --untracked -nE '$(NOTE_CITATIONS)' -- '*.go' '*.jdf' '*.md' 2>/dev/null); \
	if [ -n "$$out" ]; then echo "citations of notes that are not in the repository (cite docs/ instead):"; echo "$$out"; exit 1; fi

## fuzz: every fuzz target for FUZZTIME (60 s by default; no test timeout, so FUZZTIME=10m runs its 10 minutes).
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -timeout 0 $$pkg || exit 1; \
	  done; \
	done

## bench: the benchmark driver; prints one table with ratios to baselines and writes bench/results.json
## and bench/report.html (tables and plots in one file).
bench:
	@if [ -d bench ]; then $(GO) run ./bench; else $(GO) test -run '^$$' -bench . -benchmem ./...; fi

## soak: random faults and cancellations over potrf and ep for SOAK (10m); not in CI. Reports the
## taskpools run, failed as injected and ended otherwise (must be 0), and the peak RSS.
SOAK ?= 10m
soak:
	$(GO) run ./bench/soak -d $(SOAK)

## generate: regenerate every committed generated file (go generate).
generate:
	$(GO) generate ./...

## check-generate: fails when a committed generated file is stale (or a new one is not committed).
check-generate:
	@if git rev-parse --git-dir >/dev/null 2>&1; then \
	  $(GO) generate ./... && test -z "$$(git status --porcelain -- '*_jdf.go')" || \
	  { git status --short -- '*_jdf.go'; echo "generated files are stale: run make generate and commit"; exit 1; }; \
	fi

## demo: regenerate the examples, then run the generated tiled Cholesky (examples/potrf.jdf)
## on a 4096x4096 SPD matrix on all cores with one simulated GPU (JDF2GO_GPUS=sim:1): the
## GPU bodies run on the simulated device, shared with the CPU workers by estimated time;
## prints time, GFLOP/s, the share of tasks per device, the residual (< 1e-12) and the trace path.
demo:
	$(GO) generate ./examples/...
	JDF2GO_GPUS=sim:1 $(GO) run ./examples/potrf -n 4096 -nb 256

# PACKFLAGS strips the packed binaries: a run on the device machine carries at most 64 MiB.
PACKFLAGS = -ldflags='-s -w'

## gpu-pack: static binaries for the GPU machine (no Go there); docs/performance.md has the figures they measure.
gpu-pack:
	mkdir -p .gpu
	CGO_ENABLED=0 $(GO) test -c $(PACKFLAGS) -o .gpu/github_com_jdf2go_jdf2go_rt_gpu_cuda.test ./rt/gpu/cuda
	CGO_ENABLED=0 $(GO) test -c $(PACKFLAGS) -o .gpu/github_com_jdf2go_jdf2go_bench_internal_cudabench.test ./bench/internal/cudabench
	CGO_ENABLED=0 $(GO) build $(PACKFLAGS) -o .gpu/potrf ./examples/potrf
	CGO_ENABLED=0 $(GO) build $(PACKFLAGS) -o .gpu/batch_gemm ./examples/batch_gemm
	CGO_ENABLED=0 $(GO) build $(PACKFLAGS) -o .gpu/dpotrf ./examples/dpotrf
	CGO_ENABLED=0 $(GO) test -c $(PACKFLAGS) -o .gpu/github_com_jdf2go_jdf2go_rt_dynamic.test ./rt/dynamic
	cp bench/gpu_device.sh .gpu/

## dist-pack: binaries for bench/dist_device.sh on a machine without Go (the MPI ones need cgo and Open MPI here and there).
dist-pack:
	mkdir -p .gpu
	CGO_ENABLED=0 $(GO) build $(PACKFLAGS) -o .gpu/potrf ./examples/potrf
	$(GO) build -tags mpi $(PACKFLAGS) -o .gpu/potrf-mpi ./examples/potrf
	$(GO) build -tags mpi $(PACKFLAGS) -o .gpu/pingpong-mpi ./examples/pingpong
	cp bench/dist_device.sh .gpu/

clean:
	rm -rf bin .gpu bench/results.json
