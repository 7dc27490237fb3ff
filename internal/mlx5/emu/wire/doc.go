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
// Port.Send routes a request by its DstGID, and a response back the way its
// request came:
//
//   - In-process: if a port of this process owns DstGID (and neither side
//     forces TCP), Send calls that port's handler directly, synchronously, on
//     the sender's goroutine: no copy, no allocation, no goroutine hop. The
//     *Frame the handler receives is the sender's own; it is valid only
//     during the call and must not be modified. A response to an in-process
//     request (zero Route) goes back the same way.
//   - By reference, in-process only. A request may carry its payload as a
//     PayloadRef (Frame.Ref) instead of bytes: the handler moves the
//     bytes from where the sender keeps them to where they land itself,
//     one copy where a payload by value takes two (into the frame, out of
//     it), and one that can run device to device or by DMA. Send delivers
//     such a frame in-process or returns ErrNotLocal and sends nothing
//     (InProcess tells beforehand); its encoding claims payload bytes it
//     does not hold, which Decode rejects, so a reference never reaches a
//     stream, a ring or another process.
//   - Otherwise TCP. A port dials one connection per destination address,
//     lazily and in the background, and sends its requests on it; the
//     destination sends its responses back on that same connection. Every
//     frame that arrives over TCP carries the Route of its connection, and
//     a response must carry the Route of the request it answers (Send puts
//     it on that connection and nowhere else; a response with no Route to a
//     port of another process is refused with ErrNoRoute). The frame length
//     is the stream's length prefix.
//   - Shared memory. A dialling port first offers its peer a shared-memory
//     link on the new connection (a sealed memfd with two rings, shm.go); a
//     peer on the same host maps it and accepts, and from then on the
//     connection's frames, both ways, travel through the rings instead of
//     the socket, encoded as on the stream, read in place (no copy but the
//     one into the ring; a payload above 256 KiB is copied into the ring on
//     several cores, see internal/mlx5/emu/internal/hostcopy). The socket stays open and its end ends the link.
//     A peer on another host (or one configured with NoShm, or
//     $GDAKI_EMU_SHM=0) refuses, and the connection stays on TCP. The
//     reader of a link polls its ring while frames flow and sleeps on a
//     futex word in the ring otherwise.
//
// A connection is bound to the peer it was opened for: a frame is admitted
// only if it is addressed to this port, comes from the address at the other
// end of the connection, and is a response on a connection this port
// dialled or a request on one it accepted; anything else is dropped and
// counted (Stats.Rejected). So another local process that connects to a
// port can send it requests (which the NIC model checks like any others:
// QPN, GID, PSN, keys) but never a response: it cannot complete a WRITE or
// inject READ data. What reaches a port from the network is bounded: a frame
// longer than Config.MaxFrameLen closes its stream, memory for a frame grows
// with the bytes that actually arrived (never with what a length field
// claims), a frame begun must arrive within Config.ReadTimeout and so must
// an accepted connection's first frame, and at most Config.MaxConns
// accepted connections are open (the quietest is closed for a new one).
//
// Frames from one sender goroutine to one destination arrive in the order
// they were sent, on both paths.
//
// # Failure
//
// Send never waits for the network: it hands the frame to the handler
// (in-process) or queues its encoding on the connection and returns; the
// connection's writer goroutine writes whatever has queued up in one system
// call, under a write deadline (Config.WriteTimeout). A peer that stops
// reading therefore costs its senders no time: a frame that does not fit in
// the connection's queue (Config.MaxQueue) is not queued, and Send returns
// ErrCongested at once (the bare sentinel, without allocating;
// Stats.Congested). The sender tries again later or lets the frame go, as a
// congested link paces or drops packets: the RC engine above this package
// sends it again in a later round, and its ACK timer and retry-exceeded
// bound how long a peer that never drains can cost it. One stalled or dead
// peer never delays the frames to another.
// Port.Reply, for a handler answering the request it was given, waits
// instead, up to WriteTimeout, for room on that request's connection: it
// holds back only the connection the request came on, that is the peer that
// asked (as a responder's resources hold back its requester).
//
// A connection that breaks (dial failure, write error or deadline, peer
// closed it, read deadline, bad frame) is closed and the frames queued on it
// are lost; the next Send to that destination returns a *SendError matching
// ErrUnreachable with the cause, the one after dials again (in the
// background). After a failed dial, Sends to the same address fail at once
// with the same cause for one Config.DialTimeout, so a dead peer costs its
// requester no dialling. A Send that returned nil has handed the frame to the
// peer's handler (in-process) or queued it on a connection (TCP): frames
// queued or in flight when a peer dies, or when the sending port closes, are
// lost silently. A frame that arrives while the port has no handler is
// dropped and counted (Stats.Dropped). A TCP stream that carries an
// undecodable or oversized frame is closed (Stats.DecodeErrors).
//
// A shared-memory link keeps these properties: Send does not wait (a frame
// that does not fit in the ring is ErrCongested), each destination has its
// own bounded ring, responses travel on the link of their request, and what
// arrives is admitted against the peer the connection was opened for. The
// segment is sealed against resizing, so no peer can make the other's
// mapping fault; every position and length read from it is checked, and
// headers are decoded from a private copy; a peer that breaks a rule of the
// ring (or offers anything but a sealed segment of its own with the offer's
// token) has its connection closed (Stats.DecodeErrors) or refused.
//
// # Threading
//
// Send may be called from any number of goroutines. The handler is called
// concurrently: from the goroutines of in-process senders and from one
// reader goroutine per TCP connection; calls from one source are sequential
// and in order. The TCP path stops reading a connection while its handler
// runs, so a slow handler backs up its senders (their frames are then
// dropped). A handler may call Send (also to the port that sent the frame,
// so in-process replies nest on the stack; a model that replies in-line must
// bound that recursion itself).
//
// # Lifetime
//
// Close is idempotent: it unregisters the port, closes its listener and every
// connection (discarding frames still queued), ends dials in progress, and
// waits for its goroutines and for in-process deliveries still running in
// its handler. Do not call Close from the port's own handler (it would wait
// for itself). After Close, Send returns ErrClosed and frames addressed to
// the port are unreachable.
package wire
