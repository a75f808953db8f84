package gpu_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/gpu"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want gpu.Spec
	}{
		{"", gpu.Spec{}},
		{"none", gpu.Spec{}},
		{" NONE ", gpu.Spec{}},
		{"sim", gpu.Spec{Backend: "sim", Count: 1}},
		{"sim:3", gpu.Spec{Backend: "sim", Count: 3}},
		{"Sim:2", gpu.Spec{Backend: "sim", Count: 2}},
		{"cuda", gpu.Spec{Backend: "cuda"}},
		{"auto", gpu.Spec{Backend: "auto"}},
	} {
		got, err := gpu.ParseSpec(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if back, err := gpu.ParseSpec(got.String()); err != nil || back != got {
			t.Errorf("ParseSpec(%q.String()) = %+v, %v", tc.in, back, err)
		}
	}
	for _, bad := range []string{"sim:0", "sim:-1", "sim:x", "sim:65", "gpu", "cuda:2", "sim:1:2"} {
		if _, err := gpu.ParseSpec(bad); !errors.Is(err, gpu.ErrBadSpec) {
			t.Errorf("ParseSpec(%q): %v, want ErrBadSpec", bad, err)
		}
	}
	t.Setenv(gpu.EnvDevices, "sim:2")
	if s, err := gpu.SpecFromEnv(); err != nil || s.Count != 2 {
		t.Fatalf("SpecFromEnv: %+v, %v", s, err)
	}
}

func TestOpenDevices(t *testing.T) {
	if !slices.Contains(gpu.Backends(), "sim") {
		t.Fatalf("backends %v: the sim import did not register", gpu.Backends())
	}
	devs, err := gpu.OpenDevices(gpu.Spec{Backend: "sim", Count: 2})
	if err != nil || len(devs) != 2 {
		t.Fatalf("OpenDevices: %d, %v", len(devs), err)
	}
	for i, d := range devs {
		if d.Index() != i || d.Name() != []string{"gpu0", "gpu1"}[i] || d.Info().Type != gpu.TypeSim {
			t.Errorf("device %d: %s index %d type %v", i, d.Name(), d.Index(), d.Info().Type)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if devs, err := gpu.OpenDevices(gpu.Spec{}); err != nil || len(devs) != 0 {
		t.Fatalf("none: %d devices, %v", len(devs), err)
	}
	if !slices.Contains(gpu.Backends(), "cuda") {
		if _, err := gpu.OpenDevices(gpu.Spec{Backend: "cuda"}); !errors.Is(err, gpu.ErrNoBackend) {
			t.Fatalf("cuda without its package: %v, want ErrNoBackend", err)
		}
		if devs, err := gpu.OpenDevices(gpu.Spec{Backend: "auto"}); err != nil || len(devs) != 0 {
			t.Fatalf("auto without cuda: %d devices, %v", len(devs), err)
		}
	}
}

func TestBatchingFromEnv(t *testing.T) {
	t.Setenv(gpu.EnvBatching, "off")
	h := newHarness(t, harnessConfig{})
	called := false
	inc := batchInc("E", func(d *gpu.Device, task *gpu.Task, s *gpu.Stream) gpu.Result {
		if n, err := s.CollectBatch(task, func(*gpu.Task, *gpu.Task, any) gpu.Action { called = true; return gpu.Accept }, nil); n != 0 || err != nil {
			t.Errorf("collect with batching off: %d, %v", n, err)
		}
		work(s, task.EC().(*ec).name)
		return gpu.Done
	})
	h.queueBatch(inc, nil, "e1", "e2")
	h.finish()
	if called {
		t.Fatal("the callback ran with JDF2GO_BATCHING=off")
	}
}

func TestOpenRTFromEnv(t *testing.T) {
	t.Setenv(gpu.EnvDevices, "sim:3")
	devs, err := gpu.OpenRTFromEnv()
	if err != nil || len(devs) != 3 {
		t.Fatalf("%d devices, %v", len(devs), err)
	}
	for _, d := range devs {
		if !d.Accepts(rt.GPU) || d.Accepts(rt.CUDA) || d.Accepts(rt.CPU) || d.Load() != 0 {
			t.Fatalf("%s: accepts GPU %v, CUDA %v, load %d", d.Name(), d.Accepts(rt.GPU), d.Accepts(rt.CUDA), d.Load())
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(gpu.EnvDevices, "sim:zero")
	if _, err := gpu.OpenRTFromEnv(); !errors.Is(err, gpu.ErrBadSpec) {
		t.Fatalf("bad spec: %v", err)
	}
}

// A program's -gpus flag wins over JDF2GO_GPUS, which wins over auto; Describe names
// what was opened, and OpenRT links the devices.
func TestProgramSpecAndDescribe(t *testing.T) {
	t.Setenv(gpu.EnvDevices, "sim:2")
	for _, c := range []struct {
		flag string
		want gpu.Spec
	}{
		{"sim:1", gpu.Spec{Backend: "sim", Count: 1}},
		{"", gpu.Spec{Backend: "sim", Count: 2}},
	} {
		if got, err := gpu.ProgramSpec(c.flag); err != nil || got != c.want {
			t.Fatalf("ProgramSpec(%q) = %v, %v; want %v", c.flag, got, err, c.want)
		}
	}
	t.Setenv(gpu.EnvDevices, "")
	if got, err := gpu.ProgramSpec(""); err != nil || got != (gpu.Spec{Backend: "auto"}) {
		t.Fatalf("ProgramSpec without flag and variable = %v, %v; want auto", got, err)
	}
	if _, err := gpu.ProgramSpec("gpu:3"); !errors.Is(err, gpu.ErrBadSpec) {
		t.Fatalf("bad flag: %v", err)
	}
	devs, err := gpu.OpenRT(gpu.Spec{Backend: "sim", Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := gpu.Describe(devs); got != "gpu0 (sim0), gpu1 (sim1)" || gpu.Describe(nil) != "none" {
		t.Fatalf("Describe: %q", got)
	}
	if len(devs[0].Device().Peers()) != 1 || devs[0].Device().Peers()[0] != devs[1].Device() {
		t.Fatal("OpenRT did not link the devices")
	}
	for _, d := range devs {
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
