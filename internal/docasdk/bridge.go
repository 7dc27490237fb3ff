package docasdk

import "sync/atomic"

// What packages verbs and gpunetio share about SDK mode besides the calls.

var standIn atomic.Bool

// SetStandInPDs lets package verbs open an SDK-mode device (doca_dev) on a
// protection domain of an emulated device, which has no rdma-core struct
// ibv_pd: verbs then hands the SDK a stand-in, a page whose first word (the
// ibv_pd's context pointer) points into the page. Only the stand-in SDK of
// package fakesdk accepts that; a real SDK would read it as rdma-core
// objects. This module's tests turn it on to run SDK mode on emu0 and
// emu1; nothing else may. Off by default.
func SetStandInPDs(on bool) { standIn.Store(on) }

// StandInPDs reports whether SetStandInPDs turned stand-in PDs on.
func StandInPDs() bool { return standIn.Load() }

// VerbsGPURef is set by package verbs when it initialises: it makes the
// verbs value (a *verbs.GPURef) that carries a GPU handle, with its name and
// its SDK handle (zero in open mode), into verbs' UMEM creation, the gpu
// argument of doca_verbs_umem_create. Package gpunetio calls it for its
// GPUs. It lives here because both packages import this one and neither may
// expose the SDK handle.
var VerbsGPURef func(name string, gpu GPU) any
