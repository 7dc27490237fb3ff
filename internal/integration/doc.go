// Package integration holds tests that cross several layers: the device
// headers' thread-scope paths compiled as host C++ (internal/devhost) posting
// to QPs that gpunetio exported on the emulated NIC, with CPU threads in place
// of GPU threads. It has no non-test code.
package integration
