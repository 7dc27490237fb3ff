// Package mmio holds the few stores that reach device registers and memory
// that a NIC reads: an 8-byte doorbell store that is one plain 64-bit store
// (never a locked read-modify-write, which MMIO does not support), and the
// barriers that order ordinary stores before it.
//
// On amd64 and arm64 the functions are written in assembly so that the
// compiler can neither split the store nor move other memory accesses across
// the barrier; other architectures get a portable fallback built on
// sync/atomic (a full barrier, correct but slower).
package mmio

import "unsafe"

// Store64 stores v to the 8 bytes at p as a single 64-bit store. v is stored
// in host byte order: callers pass an already big-endian-encoded doorbell.
// It is not itself a barrier; use WriteBarrier before it.
func Store64(p unsafe.Pointer, v uint64) { store64(p, v) }

// Store32 stores v to the 4 bytes at p as a single 32-bit store (doorbell
// records).
func Store32(p unsafe.Pointer, v uint32) { store32(p, v) }

// WriteBarrier orders every earlier store before every later store, as seen
// by a device (rdma-core's udma_to_device_barrier and mmio_wc_start): SFENCE
// on amd64, DMB OSHST on arm64.
func WriteBarrier() { writeBarrier() }

// ReadBarrier orders every earlier load before every later load (rdma-core's
// udma_from_device_barrier): used after observing a CQE's owner bit and
// before reading the rest of it.
func ReadBarrier() { readBarrier() }

// Load64 loads the 8 bytes at p as one 64-bit load.
func Load64(p unsafe.Pointer) uint64 { return load64(p) }
