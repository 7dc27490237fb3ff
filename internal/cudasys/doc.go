// Package cudasys is the raw, run-time loaded binding of the CUDA driver API
// (libcuda.so.1) and of NVRTC (libnvrtc): one C table of entry points per
// library, filled at run time through internal/dl (load.go), one thin C
// shim per call, and Go functions that pass plain values and opaque handles
// through. Adding an entry point is a p_ pointer, one SYM/OPT line in the
// table and its wrapper; the loader needs no change. It has no API for users and no error types: every call
// returns the raw result code, and the public package
// github.com/gdaki/gpunetio/cuda turns codes into errors, tracks object
// lifetimes and documents the rules. cgo stays here so that no public
// package imports "C".
//
// Driver calls that need a context take it as the first argument; the shim
// makes it current on the calling OS thread around the call (pushing only
// when another context is current) and restores the previous one, all
// inside one cgo call, so the goroutine never needs to be locked to its
// thread. A result whose failure came from that push or pop carries
// StagePush or StagePop in the bits above the CUresult.
package cudasys
