// Package common is the host-side code shared by the three example programs
// (examples/put_bw, examples/write_bw, examples/write_lat): the command line
// with the reference examples' flags and defaults, the out-of-band TCP
// exchange of QP numbers, GIDs, LIDs, buffer addresses and keys, the RC
// connection over package verbs, the perftest-like result tables and their
// JSON/CSV forms, the server's data validation, Ctrl+C handling and the
// lookup of the compiled kernel images.
//
// Nothing here needs a GPU; the parts that do (memory, kernels, timing) live
// in the example mains.
//
// # Wire format of the out-of-band exchange
//
// One TCP connection per run, server port 2000 by default. Every integer is
// little-endian (the reference sends native x86-64/arm64 structs, so this is
// the same bytes), with no framing and no padding. Each peer sends one
// endpoint record:
//
//	N x { addr uint64, rkey uint32 }   remote-writable buffers (N fixed per program and role)
//	qpn uint32                         the QP number (24 bits, non-zero)
//	gid [16]byte                       the GID, network order
//	lid uint16                         the port LID (0 on RoCE)
//
// The server writes its record first and then reads the client's; the client
// reads first. After its measurements the client sends an 8-byte completion
// record ("GDKD" then the number of error completions its kernels saw, a
// uint32) and closes the connection; a server that reads EOF instead (a
// reference client) takes it as completion too. Reads use io.ReadFull and
// every socket operation has a deadline.
//
// # Lifetime and threading
//
// The functions are plain and synchronous; the values they return are owned
// by the caller. Interrupts installs a process-wide signal handler and must be
// stopped with the function it returns.
package common
