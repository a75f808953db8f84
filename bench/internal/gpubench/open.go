package gpubench

import (
	"fmt"
	"sync/atomic"

	"github.com/jdf2go/jdf2go/rt/gpu"
	"github.com/jdf2go/jdf2go/rt/gpu/driver"
)

var openSeq atomic.Int64

// OpenBackends opens backends configured beyond what a device specification
// says (latency, names, a CUDA ordinal) through gpu.Open, linked, under a driver name of
// their own.
func OpenBackends(opts []gpu.Option, bes ...driver.Backend) ([]*gpu.RTDevice, error) {
	name := fmt.Sprintf("gpubench-%d", openSeq.Add(1))
	driver.Register(name, driver.Instances(bes...))
	return gpu.Open(name, opts...)
}
