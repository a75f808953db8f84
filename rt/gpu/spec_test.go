package gpu_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/jdf2go/jdf2go/rt"
	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
	"github.com/jdf2go/jdf2go/rt/gpu/sim"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "none"},
		{"none", "none"},
		{" NONE ", "none"},
		{"sim", "sim"},
		{"sim:3", "sim:3"},
		{"Sim:2", "sim:2"},
		{"cuda", "cuda"},
		{"cuda:2", "cuda:2"},
		{"auto", "auto"},
		{"my-sim_2:64", "my-sim_2:64"},
	} {
		got, err := gpu.ParseSpec(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSpec(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if back, err := gpu.ParseSpec(got); err != nil || back != got {
			t.Errorf("ParseSpec(%q) = %q, %v", got, back, err)
		}
	}
	for _, bad := range []string{"sim:0", "sim:-1", "sim:x", "sim:65", "sim:", ":2", "2sim", "auto:2", "none:1", "s m", "sim:1:2"} {
		if _, err := gpu.ParseSpec(bad); !errors.Is(err, gpu.ErrBadSpec) {
			t.Errorf("ParseSpec(%q): %v, want ErrBadSpec", bad, err)
		}
	}
}

func TestOpenDevices(t *testing.T) {
	if !slices.Contains(driver.Drivers(), "sim") {
		t.Fatalf("drivers %v: the sim import did not register", driver.Drivers())
	}
	devs, err := gpu.OpenDevices("sim:2")
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
	if devs, err := gpu.OpenDevices("none"); err != nil || len(devs) != 0 {
		t.Fatalf("none: %d devices, %v", len(devs), err)
	}
	if _, err := gpu.OpenDevices("nosuchbackend"); !errors.Is(err, gpu.ErrNoBackend) {
		t.Fatalf("a family that is not registered: %v, want ErrNoBackend", err)
	}
	if !slices.Contains(driver.Drivers(), "cuda") {
		if _, err := gpu.OpenDevices("cuda"); !errors.Is(err, gpu.ErrNoBackend) {
			t.Fatalf("cuda without its package: %v, want ErrNoBackend", err)
		}
		if devs, err := gpu.OpenDevices("auto"); err != nil || len(devs) != 0 {
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

// Open reads JDF2GO_GPUS when given no specification; the specification
// wins over the variable, which wins over auto.
func TestOpenFromEnv(t *testing.T) {
	t.Setenv(gpu.EnvDevices, "sim:3")
	devs, err := gpu.Open("")
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
	devs, err = gpu.Open("sim:1")
	if err != nil || len(devs) != 1 {
		t.Fatalf("a specification over the variable: %d devices, %v", len(devs), err)
	}
	if err := devs[0].Close(); err != nil {
		t.Fatal(err)
	}
	t.Setenv(gpu.EnvDevices, "sim:zero")
	if _, err := gpu.Open(""); !errors.Is(err, gpu.ErrBadSpec) {
		t.Fatalf("bad spec: %v", err)
	}
	if _, err := gpu.Open("gpu:3"); !errors.Is(err, gpu.ErrNoBackend) {
		t.Fatalf("an unknown family: %v", err)
	}
	t.Setenv(gpu.EnvDevices, "")
	if !slices.Contains(driver.Drivers(), "cuda") {
		if devs, err := gpu.Open(""); err != nil || len(devs) != 0 {
			t.Fatalf("auto without cuda: %d devices, %v", len(devs), err)
		}
	}
}

// A driver registered under a name of its own opens backends configured by
// the caller; Describe names what was opened, and Open links the devices.
func TestOpenInstancesAndDescribe(t *testing.T) {
	driver.Register("spec-test-pair", driver.Instances(sim.New(sim.WithName("left")), sim.New(sim.WithName("right"))))
	devs, err := gpu.Open("spec-test-pair")
	if err != nil {
		t.Fatal(err)
	}
	if got := gpu.Describe(devs); got != "gpu0 (left), gpu1 (right)" || gpu.Describe(nil) != "none" {
		t.Fatalf("Describe: %q", got)
	}
	if len(devs[0].Device().Peers()) != 1 || devs[0].Device().Peers()[0] != devs[1].Device() {
		t.Fatal("Open did not link the devices")
	}
	for _, d := range devs {
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
