package cuda

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

// TestBackendWithoutGPU runs where CUDA is absent (here and in CI): the
// "cuda" family is registered, counts no device, and every entry point that
// needs the driver fails with ErrUnavailable instead of crashing.
func TestBackendWithoutGPU(t *testing.T) {
	if !slices.Contains(driver.Drivers(), "cuda") {
		t.Fatalf("the cuda family is not registered: %v", driver.Drivers())
	}
	if Init() == nil {
		t.Skip("CUDA is available here: the GPU tests cover it")
	}
	if n, err := Count(); n != 0 || err != nil {
		t.Fatalf("Count() = %d, %v; want 0, nil without a driver", n, err)
	}
	// auto falls back to no device, with one log line that says why.
	var logged bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	devs, err := gpu.Open("auto")
	slog.SetDefault(prev)
	if err != nil || len(devs) != 0 {
		t.Fatalf("auto: %d devices, %v; want none", len(devs), err)
	}
	if n := strings.Count(logged.String(), "\n"); n != 1 || !strings.Contains(logged.String(), "no CUDA device") {
		t.Fatalf("auto logged %q, want one line saying it runs without GPUs", logged.String())
	}
	// An explicit cuda fails with the reason.
	if devs, err := gpu.Open("cuda"); !errors.Is(err, gpu.ErrNoDevice) ||
		!errors.Is(err, ErrUnavailable) || len(devs) != 0 {
		t.Fatalf("cuda: %d devices, %v; want ErrNoDevice wrapping ErrUnavailable", len(devs), err)
	}
	t.Setenv(gpu.EnvDevices, "cuda")
	if devs, err := gpu.Open(""); !errors.Is(err, gpu.ErrNoDevice) || len(devs) != 0 {
		t.Fatalf("JDF2GO_GPUS=cuda: %d devices, %v; want ErrNoDevice", len(devs), err)
	}
	if _, err := OpenDevice(0); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("OpenDevice: %v, want ErrUnavailable", err)
	}
	if _, err := NewPinnedPool(0); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("NewPinnedPool: %v, want ErrUnavailable", err)
	}
}

func TestBackendOptionsFromEnv(t *testing.T) {
	for _, c := range []struct{ env, val string }{
		{EnvMemFraction, "most"}, {EnvMemFraction, "0"}, {EnvMemFraction, "1.5"},
		{EnvStagingMB, "0"}, {EnvStagingMB, "lots"},
	} {
		t.Run(c.env+"="+c.val, func(t *testing.T) {
			t.Setenv(c.env, c.val)
			cfg, err := configFromEnv()
			if err == nil {
				err = cfg.check()
			}
			if !errors.Is(err, ErrBadArgument) {
				t.Fatalf("err = %v, want ErrBadArgument", err)
			}
			// OpenDevice reports the bad setting before it needs a driver.
			if _, err := OpenDevice(0); !errors.Is(err, ErrBadArgument) {
				t.Fatalf("OpenDevice: %v, want ErrBadArgument", err)
			}
		})
	}
	t.Setenv(EnvMemFraction, "0.5")
	t.Setenv(EnvStagingMB, "8")
	cfg, err := configFromEnv()
	if err != nil || cfg.check() != nil || cfg.memFraction != 0.5 || cfg.staging != 8<<20 {
		t.Fatalf("config %+v, %v", cfg, err)
	}
	// The fraction sizes the pool from the free memory at open.
	b, f := newFakeBackend(t, 1<<30, MemFraction(0.25))
	if free, total, _ := b.MemInfo(); total != 1<<28 || free != total {
		t.Fatalf("pool of a quarter of 1 GiB: free %d, total %d", free, total)
	}
	if info := b.Info(); info.Type != driver.TypeCUDA || !info.Batching || !info.ThreadBound {
		t.Fatalf("Info() = %+v", info)
	}
	must(t, b.Close())
	fakeClosed(t, f)
}
