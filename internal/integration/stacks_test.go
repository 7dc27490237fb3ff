package integration

import "github.com/gdaki/gpunetio/gpunetio"

// Record where every verbs, gpunetio and CUDA object is made, so the leak
// report of TestMain names the stack of anything a test leaves open.
func init() { gpunetio.RecordStacks(true) }
