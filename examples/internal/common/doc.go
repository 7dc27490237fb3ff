// Package common is the host-side code shared by the example programs
// (examples/put_bw, write_bw, write_lat, twosided_bw, twosided_lat) that is about
// being an example rather than about GDAKI: the command line with the
// reference examples' flags and defaults, the out-of-band TCP connection,
// the perftest-like result tables and their JSON/CSV forms, the server's
// data validation, Ctrl+C handling and the lookup of the compiled kernel
// images. What every GDAKI program needs (endpoint encoding, RC connect,
// memory registration) comes from the library: packages verbs and gpunetio.
//
// Nothing here needs a GPU; the parts that do (memory, kernels, timing) live
// in examples/internal/gpurun.
//
// # Wire format of the out-of-band exchange
//
// One TCP connection per run, server port 2000 by default. Each peer sends
// one endpoint record in the byte format of NVIDIA's DOCA GPUNetIO verbs
// examples (verbs.Endpoint.MarshalDOCA), so a Go example can face the C++
// one in either role. Every integer is little-endian (the reference sends
// native x86-64/arm64 values), with no framing and no padding:
//
//	N x { addr uint64, rkey uint32 }   remote-writable buffers (N fixed per program and role)
//	qpn uint32                         the QP number (24 bits, non-zero)
//	gid [16]byte                       the GID, network order
//	lid uint32                         the port LID (0 on RoCE); four bytes, as the reference's int
//
// The put_bw and write_bw servers send their 16 buffers and the clients
// none; both write_lat roles send their 10 poll buffers; the twosided_bw
// and twosided_lat clients send their flag word and the servers none. The record carries
// no PSN and no MTU: both sides start at PSN 0 and use a 4096-byte path MTU,
// as the reference does. Each side writes its record before reading the
// peer's.
//
// After its measurements a Go client sends an 8-byte completion record
// ("GDKD" then the number of error completions its kernels saw, a uint32)
// and closes the connection; a server that reads EOF instead (a reference
// client) takes it as completion too. Reads are full reads and every socket
// operation has a deadline.
//
// # Lifetime and threading
//
// The functions are plain and synchronous; the values they return are owned
// by the caller. Interrupts installs a process-wide signal handler and must be
// stopped with the function it returns.
package common
