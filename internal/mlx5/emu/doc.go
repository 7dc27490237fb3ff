// Package emu is a software ConnectX: an mlx5 device that accepts the same
// DevX PRM command bytes as the hardware, keeps the firmware's objects, and
// executes the send WQEs that software writes into its rings, moving data
// to another emulated device over the emulated wire (package wire). It sits
// behind the driver boundary of internal/mlx5 exactly like the devx driver,
// so every layer above it runs unchanged on machines without a NIC.
//
// # Devices
//
// The provider lists emu0 .. emu{N-1} beside the real devices, N from
// GDAKI_EMU_DEVICES (default 2; 0 hides them). Each name is one NIC per
// process, created on first Open and kept until the process exits; every
// Open is a new DevX context (a new uid) on it. GDAKI_EMU_MODEL selects the
// model: "cx7" (default, a ConnectX-7) or "cx8" (adds cap2
// send_dbr_mode_no_dbr_ext, the DBR-less SQ). Tests and tools that need an
// explicit configuration use NewNIC(Config) and NIC.Open; NIC.Close stops
// its engine and closes its wire port.
//
// Each NIC's GID index 0 is the RoCE v2 IPv4-mapped GID ::ffff:127.x.y.z of
// its own loopback address (see package wire), so a peer in another process
// reaches it by that GID; GDAKI_EMU_ADDR binds a routable address instead
// for peers on other hosts. The port is Ethernet (RoCE), MTU 4096, LID 0.
//
// # Firmware
//
// Commands go through what the kernel does first: the uid
// is overwritten, cq_umem_valid/dbr_umem_valid/wq_umem_valid are forced to
// 1, a non-zero vhca_tunnel_id, a create call with a non-create opcode, a
// general command outside the whitelist (QUERY_HCA_CAP,
// QUERY_HCA_VPORT_CONTEXT, QUERY_ROCE_ADDRESS, QUERY_NIC_VPORT_CONTEXT, NOP)
// and a modify/query whose object id differs from the object's are refused
// with EINVAL and the output left untouched. Firmware then checks mailbox
// lengths, op_mod, reserved/read-only fields, sizes against the
// capabilities, object references (which must belong to the same context:
// BAD_RES otherwise), QP state legality and the per-transition optional
// masks (mlx5.TransitionFor), and the path (MTU, GID index, remote GID
// family, udp_sport range). Firmware decodes the mailboxes with mlx5's
// typed parsers (UnmarshalCreateCQIn, UnmarshalCreateQPIn,
// UnmarshalModifyQPIn), applies a transition's fields with mlx5's
// AppliedFields and QPContext.CopyFields, and builds its outputs with
// mlx5's typed output structures (QueryQPOut, QueryCQOut, QueryRMPOut and
// the general queries' outputs, written with MarshalTo over the context as
// created, so QUERY_* returns reserved bits as they were sent) and
// constants: the emulator keeps no layout, size, transition rule or
// enumeration value of its own. A rejected command returns a *mlx5.CmdError
// with errno EREMOTEIO and the output mailbox's status and syndrome filled;
// each failure reason has its own stable syndrome (syndromes.go,
// SyndromeInfo).
//
// QUERY_HCA_CAP reports a ConnectX-7-like device: RC and UC, RoCE v2 (UDP
// 4791, source ports 0xc000..0xffff), atomics CS/FA and masked CS/FA on 4
// and 8 bytes with atomic_req_8B_endianness_mode = 1, cd (cross-channel),
// cq_oi, log_max_qp_sz 15, log_max_cq_sz 22, log_max_msg 30,
// log_max_ra_req/res_qp 4, max_wqe_sz_sq 1024, ts formats "both",
// rts2rts_qp_dscp and rts2rts_qp_udp_sport.
//
// RTS2RTS takes what the kernel's verbs table allows (access flags,
// min_rnr_nak, pm_state, the alternate path) plus what DOCA sends a ConnectX
// over DevX to move a QP in RTS to another source GID and traffic class:
// SGID_INDEX (1<<23), DSCP (1<<17, cap rts2rts_qp_dscp) and the UDP source
// port (opt_param_mask_95_32 bit 2, cap rts2rts_qp_udp_sport), each checked
// like the same field at INIT2RTR. The rest of the primary path (remote GID,
// MAC, hop limit) does not change in RTS: a ConnectX moves an RC QP to
// another path only by path migration, so PRIMARY_ADDR_PATH (1<<7) is
// BAD_PARAM on RTS2RTS.
//
// CREATE_CQ also looks at the ring: every entry (entry 0 of a collapsed CQ)
// must be one no poller takes for a completion of the first pass, with the
// owner bit 1 or the opcode INVALID (0xF); otherwise BAD_PARAM with
// SynCQRingOwned. A ConnectX reads nothing at CREATE_CQ, and a ring software
// forgot to initialise (zeros: opcode REQ, owner 0) reads as 2^log_cq_size
// successful completions nobody posted; the owner-bit rules make
// initialisation software's duty (op_own 0xF1, mlx5.InitCQEs), and the
// emulator refuses the ring instead of inventing completions or writing
// memory at creation, so the bug shows where it is made.
//
// # Objects
//
// PDs, MRs (mkey = index<<8 | variant, lkey == rkey; REMOTE_WRITE and
// REMOTE_ATOMIC need LOCAL_WRITE; plain and dma-buf registration, at most
// 2^46 bytes), UMEMs,
// UAR pages, CQs (64-byte CQEs, owner bit per pass, byte 63 visible last,
// overrun-ignore, collapsed), QPs (RC and UC; RST/INIT/RTR/RTS/ERR; regular
// RQ, zero-size RQ, or an SRQ made with CREATE_RMP: cyclic or linked-list
// receive WQEs, shared by QPs of the context; QUERY_RMP reports its
// counters; MODIFY_RMP answers BAD_OP). Cross-channel slaves (cd_slave_*,
// SEND_EN) are not emulated: BAD_PARAM at CREATE_QP, LOCAL_QP_OP_ERR for
// SEND_EN. A QP in ERR completes its send WQEs and the receives posted to
// its own RQ with WR_FLUSH_ERR, in order, and every receive posted while it
// stays in ERR (an RQ in device memory is looked at once a millisecond); an
// SRQ keeps its receives. A UMEM, PD or UAR in use refuses to go (EBUSY), a CQ used by a QP
// refuses DESTROY_CQ (RES_BUSY), a device with live objects refuses Close
// (EBUSY).
//
// Identifiers never alias a live object. Every allocator (context uids, PD
// numbers, memory key indexes, UMEM ids, UAR indexes, CQNs, QPNs, RMP
// numbers) is next-fit over its PRM field width: a new id is the first one
// after the previous that no live object holds, wrapping at the top of the
// range, so a freed id comes back only after every other one was tried.
// Memory keys carry the number of the allocation pass in their variant byte,
// as a ConnectX advances the variant for every reuse of an index: a stale
// rkey reaches a new MR only after 256 passes over 2^24 indexes. The
// reserved values stay out (0; QPN 1; key 0x100, MLX5_INVALID_LKEY).
//
// # Memory
//
// Rings, doorbell records and data buffers may be in host memory, pinned
// host memory or GPU memory. Registration (MR, UMEM) classifies each range
// once: if the process-wide GPUMemory installed with SetGPUMemory claims it
// (Claim), it is device memory, reached only through batches of copies
// (Copy; the CUDA adapter, internal/emugpu, runs a batch as asynchronous
// copies on its own stream and waits once), and no access looks up the
// memory's owner again; otherwise it is host memory, checked to be mapped
// with mincore(2) (EFAULT if not), and accessed directly. Registered host
// memory must stay mapped until it is deregistered (as with hardware, whose
// DMA would fault). Memory the NIC touches is never Go heap.
//
// A payload of more than 256 KiB that lands in host memory (a WRITE or
// SEND at the responder, a READ response at the requester), like a frame
// that the wire copies into a shared-memory ring, is copied on up to four
// cores of a host with four or more (internal/mlx5/emu/internal/hostcopy;
// GDAKI_EMU_COPY_THREADS=N sets the bound on any host, 1 copies on the
// calling goroutine alone). The landing is
// complete, every byte stored, before the responder ACKs it or writes its
// CQE.
//
// Between two NICs of this process, a WRITE or SEND frame of 256 KiB or
// more whose bytes all lie in device memory of one GPUMemory carries them
// by reference (wire.Frame.Ref): the responder, after every check a
// request gets, copies them with one batch straight from the requester's
// buffer to their destination (device to host into host memory, device to
// device within the GPUMemory), where a payload read ahead (below) is
// moved twice, one copy after the other. So that those copies move by
// DMA, a writable host MR of 256 KiB to 4 GiB is page-locked through the
// GPUMemory (HostPinner) when it is registered while one is installed, as
// a ConnectX's registration pins what it will DMA to, and at the first
// such landing otherwise; deregistration unlocks it before it returns.
// GDAKI_EMU_BYREF=0 turns payloads by reference off, GDAKI_EMU_PIN_MR=0
// the page-locking (inproc.go has the details).
//
// A copy to or from device memory costs microseconds whatever its size, so
// the engine moves what it can at once: every WQE between the last index it
// read and the producer index, with the DBR, in one batch (into a host copy
// of the ring, which software rewrites only after a WQE completed); the
// payloads of the WRITEs and SENDs that follow, up to 4 MiB, in one batch,
// pieces adjacent in device memory as one copy, and payloads scattered over
// at most twice their size as one copy of their range (prefetch.go; the
// walk that plans it keeps the WQEs it parsed, which are not parsed again
// when they are sent; a later burst from the range of the last such copy,
// put_bw's launches, has it copied again at once, without a walk); and
// the CQEs
// of one step of the engine, per CQ, in one batch. CQEs in device memory are
// written twice in one batch: first with an op_own no poller takes for a
// completion of their pass (opcode INVALID, the previous pass's owner bit),
// then with their final op_own; a poller that sees a new owner bit sees the
// CQE's other bytes, in whatever order the bytes of one copy land, as a
// ConnectX makes the last dword visible last. CQEs of one batch may become
// visible in any order among themselves. A CQ DBR in device memory is read
// only when the consumer counter last read leaves no room.
//
// Receives cost the same. A receive queue in device memory (a GPU thread
// posts its WQEs and advances its doorbell record) is read ahead: when a
// SEND finds no WQE among those read last, one batch reads the DBR and,
// after it, up to 1024 WQEs (32 KiB) from the consumer counter, and the receives
// the DBR counted cost no copy until they are used (a WQE posted again by
// only advancing the DBR is read again when its turn comes; an RQ in host
// memory, which CPU threads write, costs a load of the DBR and a read of
// the WQE). The last packet of a SEND (with or without immediate) whose
// receive buffer is device memory of the receive CQ's GPUMemory lands
// with its CQE: one batch writes the payload and then the CQE, before the
// ACK leaves, so a lone SEND costs the receiver one batch, as a lone RDMA
// WRITE does (a WRITE with immediate costs two: landing, then CQE). Under
// a burst (wire.Frame.More) the SENDs wait, their payloads copied aside,
// and land with their CQEs in one batch, as the WRITE packets of a burst
// do: when the burst ends, every 17 SENDs or 60 KiB, before any response
// of the QP leaves and before anything else of the QP happens (a WRITE
// lands after the SENDs before it); a receive buffer deregistered
// meanwhile completes its receive RESP_ERR LOCAL_PROT_ERR then, with a NAK
// of its packet and the QP to ERR, as if its landing had failed at once.
// With scatter-to-CQE
// (qpc.cs_res = 1) a receive of at most 32 bytes is written into bytes
// 0..31 of its CQE with format Inline32 (op_own bit 0x4) and the receive
// buffer is not written; cs_res 2 (64 bytes in a 128-byte CQE) and the
// requester's cs_req are refused at CREATE_QP (SynQPScatterCQE), as every
// CQ here has 64-byte CQEs.
//
// Deregistration fences the NIC off: every access to a registered range
// (one copy or batch of copies of a few MiB at most, never held across a
// wait for the network) is counted while it runs, and MR and UMEM dereg
// mark the range dead and return only when no access is in progress. From then on the NIC never
// touches the memory (the caller may unmap it at once), and what was in
// flight fails as on a ConnectX whose mkey went away: a WRITE, READ or
// atomic that reaches a deregistered MR is NAKed as a remote access error
// (REMOTE_ACCESS_ERR at the requester, the responder QP to ERR), a WRITE or
// SEND from one and a READ or atomic result into one complete with
// LOCAL_PROT_ERR, a receive buffer that went completes RESP_ERR
// LOCAL_PROT_ERR. DESTROY_QP takes both of the QP's locks, so no transmit
// or request of it is running when it returns; DESTROY_CQ and DESTROY_RMP
// refuse while a QP uses them; and a UMEM in use cannot be deregistered.
//
// # Doorbells
//
// UAR pages are 4 KiB anonymous host pages (mmap), which a GPU can map
// (UAR.IOMemory is false). The NIC's engine goroutine polls every page's
// doorbell slots (0x800/0x900/0xa00/0xb00 bfreg halves, 0x600 DBR-less, 0x020
// CQ arm: see Events), taking each 8-byte value with a compare-and-swap to zero (0 is
// never a doorbell: QPN 0 and CQN 0 are not allocated). Pacing: it polls
// without sleeping for 100 µs after the last work (2 ms on a NIC with a QP
// whose rings are in device memory: a GPU kernel's doorbell cannot wake
// it), yielding the processor as internal/spin paces its pollers (every
// 16 idle rounds on a machine where the process's pollers could take half
// of the processors or more, every millisecond otherwise), then sleeps
// from 5 µs doubling to 1 ms (50 µs with such a QP) while idle, and a
// frame or a host doorbell wakes it.
//
// # Events
//
// When a NIC is made, its emulated kernel creates its event queues with
// CREATE_EQ commands built by package mlx5 (eq.go): one per completion
// vector (COMP events; the EQNs QueryEQN returns, 0x10..0x13) and one
// asynchronous EQ (every other event type), in rings of host memory it
// hands to the device (the PAS carries the ring's address: the emulator
// has no physical addresses, and firmware accepts only pages the driver
// gave it). DevX cannot create EQs (EINVAL, as the kernel's DevX path
// refuses the kernel's own EQ commands here). Firmware writes each event
// as a 64-byte EQE at the EQ's producer counter with the pass's owner bit
// (0 on the first pass), the owner byte last, and runs the EQ's interrupt
// on the goroutine that raised it: the kernel's handler takes every EQE
// software owns, hands it to the DevX event channels subscribed to its
// object (or, for PORT_CHANGE and INTERNAL_ERROR, to the device), and moves
// the consumer counter. An event channel (CreateEventChannel) is an
// eventfd in semaphore mode whose count is its number of pending events;
// Subscribe takes what the kernel takes (a live object of the channel's
// context and types that object raises), and destroying an object ends its
// subscriptions (TestKernelEQs, TestEventChannelSubscribe, TestEQWraps).
//
// CQ arm (the 0x020 doorbell; QUERY_CQ's st): an arm records its sequence
// number and command; the next completion (any, or for a solicited arm a
// solicited or error one) moves the CQ to FIRED and writes a COMP EQE on
// its c_eqn, after the CQE is visible (for a ring in device memory, after
// the flush that writes it). One event per arm: an arm repeating the
// sequence number of the arm that last fired is ignored, and an arm whose
// consumer index is behind the producer (completions not consumed; for a
// solicited arm, a solicited or error one among them) fires at once. A CQ
// in error takes no arm (TestCQEventPerArm).
//
// Asynchronous events, where a ConnectX raises them: CQ_ERROR (syndrome
// CQ_OVERRUN, or CQ_ACCESS_VIOLATION for a failed CQE write) on a CQ that
// goes to error, then WQ_CATAS_ERROR on each QP it moves to ERR; a
// responder QP that a class C error moves to ERR raises WQ_ACCESS_ERROR
// (remote access violation, or a local protection error on its receive
// buffer), WQ_INVAL_REQ_ERROR (an invalid request, a SEND longer than its
// receive) or WQ_CATAS_ERROR (an operational error of its own); a
// requester QP moved to ERR by an error completion raises none (the CQE is
// its report); any QP of an SRQ that enters ERR (software's 2ERR included)
// raises SRQ_LAST_WQE; an RMP whose limit watermark MODIFY_RMP armed raises
// SRQ_RQ_LIMIT once when a receive leaves fewer WQEs posted than the
// watermark (not at once when fewer are posted already), which disarms it;
// NIC.SetPortState raises PORT_CHANGE (PORT_DOWN, PORT_ACTIVE) and
// NIC.InjectFatal INTERNAL_ERROR (and moves every QP to ERR). Each QP event
// is raised once, on its move to ERR.
//
// # Diagnostics
//
// StartTimeline and StopTimeline (timeline.go) record what the engines,
// the responders and the GPUMemory adapter did, with when and for how long:
// doorbells, DBR reads and pushes, transmit rounds, requests, ACKs, CQ
// flushes, batches of copies. GDAKI_EMU_TIMELINE=PREFIX records one in any
// program and writes it to PREFIX.<pid> whenever the NICs went quiet for a
// second and when a device context closes; GDAKI_EMU_CPUPROFILE=PREFIX
// writes a CPU profile from the first NIC to the first context Close
// (GDAKI_EMU_CPUPROFILE_HZ sets its rate; the kernel's timer tick bounds
// what a rate above about 1 kHz really samples). The GPUMemory adapter adds
// the copier's own stamps of each batch (copier-gpu): when its kernel saw
// the batch and when its copies were fenced.
//
// No doorbell is lost. In DBR mode the DBR is the authority: the doorbell
// says when to read it and how far to read ahead. A DBR in host memory costs
// a load and is read every round, so a doorbell that was overwritten on a
// shared page (or rung on no page at all, as a CPU proxy might) still takes
// effect. A DBR in device memory is read, as a ConnectX reads it, when a
// doorbell arrives on the QP's page (and after every state transition):
// every doorbell on a page makes each DBR-mode QP of the page read its DBR,
// so one overwritten by another QP's doorbell still takes effect; a DBR
// updated with no doorbell at all is not seen until one comes, as on
// hardware. In DBR-less mode the doorbell carries the new
// producer index (wqe_index + ceil(ds/4), which covers both the rdma-core
// and the gpunetio encoding) and another QP's doorbell on the same page can
// overwrite it before the engine reads it. A QP's doorbells carry
// increasing producer indexes, so a lost one matters only when its QP then
// stays silent. Recovery: every doorbell observed on a page marks each
// DBR-less QP bound to that page; once the page has been silent for 500 µs,
// such a QP scans its ring from its known producer index and takes a WQE
// whose ctrl segment carries this QP's number and exactly the expected
// wqe_index and whose bytes were identical in two scans at least 500 µs
// apart (then it advances by the WQE's WQEBBs and looks at the next one).
// Why this is sound: (1) a WQE left from an earlier pass over the ring
// carries a wqe_index that differs by a multiple of the ring size (at most
// 2^15 < 2^16), so it never matches; (2) software rings only after the WQE
// is complete and fenced, so the WQEs of an overwritten doorbell are
// complete and stable. What it assumes: software that shares a page
// between DBR-less QPs stores the first 8 bytes of a WQE's ctrl segment
// (wqe_index and QPN) after the rest of the WQE, with a fence between, so a
// scan never sees a valid ctrl on a half-written WQE. Software that writes
// the ctrl segment first (as mlx5.WQE.Encode does) is safe as long as it
// never leaves a WQE half written for more than a millisecond while other
// QPs ring the same page; the stability check covers shorter windows. A doorbell on a page other than the QP's uar_page is ignored, as
// hardware does. Doorbells in RST/INIT/RTR are remembered: execution starts
// at RTS from the consumer index up to the producer index.
//
// # Data engine
//
// Per SQ, WQEs execute in order from the ring (read modulo the ring size,
// so multi-WQEBB WQEs and inline data wrap): NOP, RDMA WRITE (+imm), SEND
// (+imm), RDMA READ, ATOMIC CS/FA, masked CS/FA (4 and 8 bytes), WAIT
// (opmod 0: the SQ stalls until the named CQ has produced CQE max_index,
// inclusive; the QP must be cd_master) and DUMP. WQEs are decoded by
// mlx5.WQE.Decode. Messages are split into path-MTU packets for PSNs,
// limits, ACKs and retransmission; on the emulated wire one frame carries up
// to 1 MiB of consecutive whole packets of a message (and uses their PSNs),
// so a large transfer costs one copy, not one call per packet (a frame of
// 256 KiB or more whose payload is in device memory goes by reference to
// a NIC of this process, see Memory, and is read straight into the
// shared-memory ring of its connection to another process, when it has
// one: wire.Port.SendInPlace; a frame of at most 2 KiB with more to follow
// in the same transmit round may wait in that ring to be published with
// the next ones, wire.Frame.Hold, and the round flushes what waits when it
// ends). Every frame
// asks for an ACK (ACKs are cumulative; a long message shows progress as it
// lands). The responder coalesces ACKs as a ConnectX does under load: when
// the connection already holds the next request between the same two QPs
// (wire.Frame.More) it holds the ACK back for the next one to cover, for at
// most 16 requests, and sends a held ACK as soon as a request comes alone
// and before any other response of the QP. Under such a burst, the
// payloads of plain WRITE packets into device memory wait as well, copied
// aside, and land together, one batch of copies for up to 17 packets
// instead of one each: before any response of the QP leaves, before
// anything else of the QP happens, and when the burst ends (land.go). The transmitter is paced by the link like a NIC's: the port never
// waits (package wire), and a frame it cannot queue because the connection
// to the peer is congested is sent again in a later round from where the
// message stopped, so a peer that stops reading holds back only the QPs
// that talk to it. The requester keeps
// at most 2^log_sra_max READs/atomics outstanding, honours fences (fm 2, 3,
// 4 wait for earlier READs/atomics) and writes CQEs in posting order, one per
// WQE with ce = 2 or 3 (CQE and error CQE timestamps are nanoseconds since
// the process started; the CQEs an ACK completes share one). Checks and their syndromes are those of a ConnectX:
// LOCAL_QP_OP_ERR (malformed WQE, wrong QPN or wqe_index, opcode not valid
// for the QP, a WQE cut by the producer index), LOCAL_LENGTH (message above
// 2^log_msg_max; byte_count 0 is rejected by the parser as LOCAL_LENGTH),
// LOCAL_PROT (lkey unknown, other PD, out of bounds, missing LOCAL_WRITE),
// and from the responder's NAKs REMOTE_ACCESS (rkey, PD, bounds, MR rights,
// QP rre/rwe/rae), REMOTE_INVAL_REQ (SEND or WRITE_IMM to a zero-size RQ,
// receive buffer too small, misaligned atomic, message above the
// responder's limit), REMOTE_OP, RNR_RETRY_EXC (no receive WQE, after
// rnr_retry RNR NAKs spaced by min_rnr_nak; 7 = forever) and
// TRANSPORT_RETRY_EXC (no ACK within ack_timeout = 4.096 µs × 2^t, retried
// retry_count times with go-back-N; ack_timeout 0 means no timeout, as in
// the IBA). The ACK timer runs from the transmission of the oldest
// outstanding WQE, or from when the link was first found congested for a
// WQE that could not start, and restarts only when a response acknowledges
// progress; the engine never sleeps past it. So a dead, stopped or
// black-holed peer costs its requester (retry_count+1) x 4.096 us x
// 2^ack_timeout (the tests measure it within 10%), with or without data
// queued. The failing WQE gets an error CQE even when unsignaled, the QP
// moves to ERR before that CQE is written (QUERY_QP says ERR once the CQE is
// visible), and every later WQE (outstanding or posted later) completes with
// WR_FLUSH_ERR, one CQE each. A responder-side class C error (access,
// invalid request) also moves the responder QP to ERR, before its NAK
// leaves; a responder receive error writes a RESP_ERR CQE.
//
// Responses are checked against the QP before they count: a response is
// applied only to a QP in RTS, only from its remote QPN at its remote GID
// (and, over TCP, only on the connection the requester opened: package
// wire), only for a PSN the requester has transmitted and not yet seen
// acknowledged, and only if it matches the request there (READ data for a
// READ, no more than it asked for; an ATOMIC ACK for an atomic). Anything
// else is dropped and counted (Stats.ResponsesDropped), as are requests for
// no QP, a QP not in RTR/RTS or not from its peer (Stats.RequestsDropped).
// The acknowledged PSN stops below a READ or atomic still waiting for its
// response, so a late response is still taken (or the READ retried).
//
// SEND with invalidate (WQE opcode 0x01, the key in the ctrl immediate)
// travels as SEND_LAST/ONLY_WITH_INVALIDATE. The responder invalidates the
// key if it names an MR of the responder QP's PD whose mkey allows remote
// invalidation; the receive then completes RESP_SEND_INV with the key in
// imm_inval_pkey, and every later access through the key fails. On a
// ConnectX only fast-registration keys and memory windows allow it, and no
// registration the driver boundary offers makes one: an ordinary MR, a key
// of another PD or no key fails the receive (RESP_ERR REMOTE_INVAL_REQ_ERR,
// responder QP to ERR) and the request with an invalid-request NAK
// (REMOTE_INVAL_REQ_ERR), and the key stays valid.
//
// The responder accepts requests in RTR and RTS only, from the QP's
// remote_qpn at its remote GID, with the expected PSN (a PSN ahead is
// NAKed as a sequence error once; a duplicate is re-ACKed, a duplicate READ
// re-executed, a duplicate atomic answered from the saved result). ACKs are
// cumulative: the requester asks for one on the last packet of every
// message. Standard 8-byte atomics act on the target in the host's byte
// order (atomic_req_8B_endianness_mode = 1) and return the original value in
// host order; masked atomics treat target and returned value as big-endian
// (how a ConnectX treats the extended atomics is not documented; this is
// the emulator's choice). Host-memory atomics are atomic with respect to
// CPU atomics on the same word.
//
// CQs: with oi = 0 the CQ stops at 2^log_cq_size unconsumed CQEs (the
// consumer index is read from the CQ DBR). Overrun, or a failed write to the
// ring, puts the CQ in error as on a ConnectX: QUERY_CQ status 0x9
// (overflow) or 0xa (write failure), no CQE is written any more, and every
// QP that completes to the CQ (and is not in RST) moves to ERR; their WQEs,
// outstanding and posted later, are flushed (the SQ counter in QUERY_QP
// moves) without CQEs. With oi = 1 entries are overwritten. Collapsed CQs
// (cc = 1) write every CQE to entry 0. QUERY_CQ and QUERY_QP report the live
// state and counters (state, hw/sw SQ counters, PSNs, producer/consumer
// counters).
//
// What a verbs layer reads to report errors instead of waiting: a poller
// that finds no CQE cannot tell an idle queue from a CQ in error or a QP
// that went to ERR. Hardware raises an asynchronous event (CQ_ERROR, a QP's
// WQ_CATAS/ACCESS/INVAL_REQ error); through this driver boundary the same
// facts are in QUERY_CQ (cqc.status: 0x9 overflow, 0xa write failure) and
// QUERY_QP (qpc.state 6 = ERR). Poll/PollWait can ask at a low rate while
// they find nothing (and PostSend on a QP in ERR), and return the error. The
// commands cost microseconds on the emulator and a firmware round trip on
// hardware; both drivers answer them the same way.
//
// # Threading and lifetime
//
// Commands are serialised per NIC by one lock; the data path reads lock-free
// snapshots of the QP, CQ and MR tables. Each QP has a requester lock (held
// by the engine while it transmits) and a responder lock (held while a
// request is executed). In-process delivery is synchronous: a request runs
// the responder on the sender's goroutine; responses (ACK, NAK, READ
// response, ATOMIC ACK) are queued for the requester NIC's engine, so no
// lock is held across a Send that the receiving side takes. Between
// processes (a shared-memory link on one host, TCP otherwise: package wire)
// a request runs on its connection's reader goroutine and its responses go
// back with wire.Port.Reply, which may wait (up to the write timeout) for
// room on that connection only. Nothing on the engine goroutine waits for
// the network. Everything here is safe for concurrent use. Objects must be
// released before their device is closed. TrackLeaks and LiveObjects name
// every object still alive and the stack that created it (the tests' main
// fails on any).
//
// # Assumptions (where hardware behaviour is not documented)
//
//   - Unknown or disallowed opt_param_mask bits: BAD_PARAM. Illegal state
//     transitions: BAD_RES_STATE.
//   - ctrl wqe_index must equal the slot's index (else LOCAL_QP_OP_ERR).
//   - WAIT releases once CQE max_index exists (inclusive).
//   - A DBR-less QP also accepts its doorbell at the bfreg offsets.
//   - A flushed unsignaled WQE gets its own flush CQE.
//   - A receive buffer too small for a SEND: RESP_ERR LOCAL_LENGTH at the
//     responder, REMOTE_INVAL_REQ at the requester.
//   - Scatter-to-CQE still takes the receive WQE and checks the message
//     against its length and keys (LOCAL_LENGTH, LOCAL_PROT as for any
//     receive); only the store goes to the CQE instead of the buffer. It
//     applies to SEND (with or without immediate or invalidate) of at most
//     32 bytes; a WRITE with immediate lands in memory as always.
//   - A DBR of a device-memory RQ that cannot be read reads as nothing
//     posted in host memory (RNR NAK) and as an operational error in
//     device memory (a failed copy: NAK REMOTE_OP).
//   - The requester asks for an ACK on the last packet of every wire frame
//     (up to 1 MiB), whatever log_ack_req_freq says (ACKs are cumulative,
//     so only timing differs).
//   - A CQ overrun moves to ERR the QPs that complete to the CQ, except those
//     in RST.
//   - A SEND with invalidate whose key cannot be invalidated completes the
//     receive with REMOTE_INVAL_REQ_ERR (as the Linux soft-RoCE responder
//     does) and NAKs the request as invalid.
//   - RoCE only: the GID table has one entry (index 0, RoCE v2, IPv4).
//   - A requester QP moved to ERR by an error completion raises no
//     asynchronous event; a CQ error's QPs raise WQ_CATAS_ERROR.
//   - A port set down (SetPortState) changes the state QUERY_PORT reports
//     and raises PORT_CHANGE; the wire keeps carrying frames.
//   - After InjectFatal the NIC keeps executing commands (so that software
//     can tear down); a ConnectX needs a reset.
package emu

//go:generate go run ../../enumgen
