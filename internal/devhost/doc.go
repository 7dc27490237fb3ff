// Package devhost drives the GPUNetIO device headers (cuda/include) compiled as host C++.
//
// The thread-scope paths of the device API (WQE builders, slot reservation, in-order
// readiness, doorbell/DBR/proxy submits, CQ polling, one-sided operations and counters)
// compile with g++ through the headers' portability layer. This package wraps them in small C
// functions (devhost.h) and exposes them to Go, so that CPU threads can exercise exactly the
// code that runs on the GPU against host memory: golden WQE bytes, CQ index logic, submit
// sequences and contention tests run in CI without a GPU. Warp-scope paths are GPU-only.
//
// # Memory
//
// Every structure the device code touches (the 392-byte struct doca_gpu_dev_verbs_qp, SQ and
// CQ rings, doorbell records, the UAR page or proxy mailbox) lives in C memory, never on the Go
// heap. HostQP allocates a complete set with C.posix_memalign and frees it in Close. QP wraps an
// existing struct given as an unsafe.Pointer (FromPointer), for example one the caller filled
// from a verbs QP on the emulated NIC; the caller keeps that memory alive and pinned.
//
// # Threading
//
// All QP methods may be called from many goroutines at once when the sharing mode is CTA or
// GPU (the device atomics map to GCC __atomic builtins, the fences to
// std::atomic_thread_fence plus a compiler barrier). With SharingExclusive the caller must
// serialise. Reservations block in the device code's availability check when the ring is full
// until a CQE frees the slot (the caller runs a NIC or fake NIC), unless CodeOptSkipAvailabilityCheck
// is set. Most Go wrappers of polls that would block are bounded on the Go side: they probe with
// the non-blocking poll until the completion is visible, then call the blocking one. The
// ...Direct wrappers call the blocking device waits as they are: those return by themselves on an
// error CQE, on a QP that already recorded a failure, or when the QP's poll bound (SetPollTimeout,
// in nanoseconds here) runs out, and Error reads the record they keep (cuda/README.md,
// "Extensions").
//
// # Store log
//
// With the store log enabled (EnableStoreLog), every doorbell, doorbell-record and mailbox store
// made by the headers is recorded in order, so tests can check the DBR-then-DB sequence; an
// emulator can use the same log (or its own DOCA_GPUNETIO_VERBS_HOST_STORE_HOOK) to learn of
// doorbells. The log is process-global.
package devhost
