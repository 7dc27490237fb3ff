// Package wire is the emulated network between emulated mlx5 devices: the
// frames two software NICs exchange and the transports that carry them.
//
// # Frames
//
// A Frame is an InfiniBand-transport packet as RoCE v2 carries it: the BTH
// fields (opcode, SE, AckReq, destination QPN, PSN), the extension headers
// the opcode calls for (RETH, AtomicETH, ImmDt, AETH, AtomicAckETH), the
// payload, and what the IP/UDP layers give the receiving NIC (source and
// destination GID, source QPN). AppendEncode and Decode convert frames to and
// from a versioned binary form; Decode validates strictly (see codec.go) and
// never panics on any input. Decode is zero-copy: the payload of a decoded
// frame aliases the input buffer.
//
// Decode checks syntax only. Semantics (is the PSN expected, does the RETH
// length match the payload, is the rkey valid) belong to the NIC model, which
// answers with NAKs as a real responder does.
//
// # Ports and addressing
//
// A Port is one emulated NIC port on the wire. Listen binds it to an IPv4
// address; its GID is the RoCE v2 IPv4-mapped GID ::ffff:a.b.c.d of that
// address, so a GID alone names a peer. By default each port binds its own
// loopback address 127.x.y.z (never 127.0.0.1; x.y.z derived from the process
// id and a per-process counter, another one tried when the address is in
// use) on TCP port 4791. GDAKI_EMU_PORT overrides the port number and
// GDAKI_EMU_ADDR binds a given IPv4 address instead (for peers on other
// hosts); Config fields override both. Every port of a deployment must use
// the same port number: a port dials its peers on its own port number.
//
// # Delivery
//
// Port.Send routes a frame by its DstGID:
//
//   - In-process: if a port of this process owns DstGID (and neither side
//     forces TCP), Send calls that port's handler directly, synchronously, on
//     the sender's goroutine: no copy, no allocation, no goroutine hop. The
//     *Frame the handler receives is the sender's own; it is valid only
//     during the call and must not be modified.
//   - Otherwise TCP: one connection per destination address, dialled lazily
//     by Send (bounded by Config.DialTimeout, default 100 ms) and reused.
//     Send encodes the frame into the connection's queue and returns; the
//     connection's writer goroutine writes whatever has queued up in one
//     system call, under a write deadline (Config.WriteTimeout, default 1 s).
//     The frame length is the stream's length prefix. One reader goroutine
//     per accepted connection decodes frames and calls the handler. A
//     connection that breaks (write error or deadline, peer closed it) is
//     dropped: the next Send reports the error, the one after dials again.
//
// Frames from one sender goroutine to one destination arrive in the order
// they were sent, on both paths.
//
// # Failure
//
// A Send from a single sender never blocks longer than DialTimeout +
// WriteTimeout (a dial, then at most one wait on a full queue for a write
// that has its deadline); concurrent senders to one destination may each
// wait for a few such writes. When the
// destination cannot be reached it returns a *SendError matching
// ErrUnreachable and the frame is lost; after a failed dial, Sends to the
// same address fail at once (with the same cause) for one DialTimeout, so a
// dead peer costs its requester no waiting. A Send that returned nil has
// handed the frame to the peer's handler (in-process) or queued it on a
// connection (TCP): frames queued or in flight when a peer dies, or when the
// sending port closes, are lost silently, and the failure shows on the next
// Send. Reliability (ACKs, retries, retry-exceeded) is the RC engine's job
// above this package; the wire only promises order and bounded Sends.
// A frame that arrives while the port has no handler is dropped and counted
// (Stats.Dropped). A TCP stream that carries an undecodable frame is closed
// (Stats.DecodeErrors).
//
// # Threading
//
// Send may be called from any number of goroutines. The handler is called
// concurrently: from the goroutines of in-process senders and from one
// reader goroutine per incoming TCP connection; calls from one source are
// sequential and in order. The TCP path stops reading a connection while
// its handler runs, so a slow handler backs up its senders (their Sends
// then fail after WriteTimeout). A handler may call Send (also to the port that
// sent the frame, so in-process replies nest on the stack; a model that
// replies in-line must bound that recursion itself).
//
// # Lifetime
//
// Close is idempotent: it unregisters the port, closes its listener and every
// connection (discarding frames still queued), and waits for its goroutines and for in-process deliveries
// still running in its handler. Do not call Close from the port's own
// handler (it would wait for itself). After Close, Send returns ErrClosed and
// frames addressed to the port are unreachable.
package wire
