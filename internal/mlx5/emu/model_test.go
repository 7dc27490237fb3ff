package emu

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The CPU cost model of device memory. A fakeGPU with a cost charges every
// call through the seam what CUDA copies cost on a GPU machine, by spinning
// on the calling goroutine: a fixed latency per call (the driver calls, the
// DMA engine's start and the wait for the completion of a batch), a smaller
// cost per further copy of one batch, and the bytes at a bus bandwidth. It
// counts calls, copies and bytes, so a benchmark reports copy calls per
// message beside the modelled time. (The seam before batching made one call
// per access and looked up the memory's owner with two driver calls each
// time: the "lookup" cost, which the baseline figures in the history
// include.)
//
// The figures default to what a synchronous cuMemcpy of a few bytes costs
// on a PCIe Gen5 H100 host (order of magnitude, to be replaced by the GPU
// suite's measurement); override them with
// GDAKI_EMU_COPY_COST="call=5us,op=1us,bw=25e9,dtod=1e12".

// copyCost is the cost model of one device.
type copyCost struct {
	call   time.Duration // one call: a synchronous copy, or one batch
	lookup time.Duration // an owner lookup per access (the seam before classification)
	op     time.Duration // each further copy in a batch
	bw     float64       // bytes per second between host and device
	dtod   float64       // bytes per second device to device

	calls, ops, bytes atomic.Int64
	spent             atomic.Int64 // modelled device time charged, ns
}

func defaultCopyCost() *copyCost {
	c := &copyCost{call: 5 * time.Microsecond, lookup: time.Microsecond, op: time.Microsecond, bw: 25e9, dtod: 1e12}
	if s := os.Getenv("GDAKI_EMU_COPY_COST"); s != "" {
		if err := c.parse(s); err != nil {
			panic(err)
		}
	}
	return c
}

// parse reads "call=5us,lookup=1us,op=1us,bw=25e9,dtod=1e12".
func (c *copyCost) parse(s string) error {
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return fmt.Errorf("copy cost %q: want key=value", kv)
		}
		var err error
		switch k {
		case "call":
			c.call, err = time.ParseDuration(v)
		case "lookup":
			c.lookup, err = time.ParseDuration(v)
		case "op":
			c.op, err = time.ParseDuration(v)
		case "bw":
			c.bw, err = strconv.ParseFloat(v, 64)
		case "dtod":
			c.dtod, err = strconv.ParseFloat(v, 64)
		default:
			err = fmt.Errorf("unknown key")
		}
		if err != nil {
			return fmt.Errorf("copy cost %q: %v", kv, err)
		}
	}
	return nil
}

func (c *copyCost) String() string {
	return fmt.Sprintf("call %v, op %v, %.0f GB/s host<->device, %.0f GB/s device<->device",
		c.call, c.op, c.bw/1e9, c.dtod/1e9)
}

// charge spins until the cost of a call that started at start is paid:
// its fixed part plus n bytes at bandwidth bw.
func (c *copyCost) charge(start time.Time, fixed time.Duration, n int, bw float64) {
	d := fixed + time.Duration(float64(n)/bw*1e9)
	c.spent.Add(int64(d))
	for time.Since(start) < d {
		runtime.Gosched() // a host with fewer cores than busy goroutines still runs the others
	}
}

// counts returns the counters since the last reset.
func (c *copyCost) counts() (calls, ops, bytes int64) {
	return c.calls.Load(), c.ops.Load(), c.bytes.Load()
}

func (c *copyCost) reset() { c.calls.Store(0); c.ops.Store(0); c.bytes.Store(0); c.spent.Store(0) }

// newModelGPU returns a fake GPU whose accesses cost what c says.
func newModelGPU(c *copyCost) *fakeGPU {
	g := newFakeGPU()
	g.cost = c
	return g
}
