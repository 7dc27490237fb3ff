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
// Commands go through what the kernel does first (mlx5-prm.md 1.6): the uid
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
// family, udp_sport range). A rejected command returns a *mlx5.CmdError
// with errno EREMOTEIO and the output mailbox's status and syndrome filled;
// each failure reason has its own stable syndrome (syndromes.go,
// SyndromeInfo).
//
// QUERY_HCA_CAP reports a ConnectX-7-like device: RC and UC, RoCE v2 (UDP
// 4791, source ports 0xc000..0xffff), atomics CS/FA and masked CS/FA on 4
// and 8 bytes with atomic_req_8B_endianness_mode = 1, cd (cross-channel),
// cq_oi, log_max_qp_sz 15, log_max_cq_sz 22, log_max_msg 30,
// log_max_ra_req/res_qp 4, max_wqe_sz_sq 1024, ts formats "both".
//
// # Objects
//
// PDs, MRs (mkey = index<<8 | variant, lkey == rkey; REMOTE_WRITE and
// REMOTE_ATOMIC need LOCAL_WRITE; plain and dma-buf registration), UMEMs,
// UAR pages, CQs (64-byte CQEs, owner bit per pass, byte 63 visible last,
// overrun-ignore, collapsed), QPs (RC and UC; RST/INIT/RTR/RTS/ERR; regular
// RQ, zero-size RQ, or an SRQ made with CREATE_RMP: cyclic or linked-list
// receive WQEs, shared by QPs of the context; QUERY_RMP reports its
// counters; MODIFY_RMP answers BAD_OP). Cross-channel slaves (cd_slave_*,
// SEND_EN) are not emulated: BAD_PARAM at CREATE_QP, LOCAL_QP_OP_ERR for
// SEND_EN. A UMEM, PD or UAR in use refuses
// to go (EBUSY), a CQ used by a QP refuses DESTROY_CQ (RES_BUSY), a device
// with live objects refuses Close (EBUSY).
//
// # Memory
//
// Rings, doorbell records and data buffers may be in host memory, pinned
// host memory or GPU memory. Registration (MR, UMEM) classifies each range
// once: if the process-wide GPUMemory installed with SetGPUMemory claims it
// (Contains), every access goes through its Read and Write (the CUDA adapter
// implements them with device copies); otherwise it is host memory, checked
// to be mapped with mincore(2) (EFAULT if not), and accessed directly.
// Registered host memory must stay mapped until it is deregistered (as with
// hardware, whose DMA would fault). Memory the NIC touches is never Go heap.
//
// # Doorbells
//
// UAR pages are 4 KiB anonymous host pages (mmap), which a GPU can map
// (UAR.IOMemory is false). The NIC's engine goroutine polls every page's
// doorbell slots (0x800/0x900/0xa00/0xb00 bfreg halves, 0x600 DBR-less, 0x020
// CQ arm), taking each 8-byte value with a compare-and-swap to zero (0 is
// never a doorbell: QPN 0 and CQN 0 are not allocated), and reads the SQ
// DBR of every DBR-mode QP on every round. Pacing: it spins for a few
// rounds, then sleeps from 5 µs doubling to 1 ms while idle, and a doorbell
// or frame wakes it.
//
// No doorbell is lost. In DBR mode the DBR is the authority: the doorbell is
// only a hint, and the DBRs are re-read every round, so a doorbell that was
// overwritten on a shared page (or rung on no page at all, as a CPU proxy
// might) still takes effect. In DBR-less mode the doorbell carries the new
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
// so a large transfer costs one copy, not one call per packet. The
// requester keeps
// at most 2^log_sra_max READs/atomics outstanding, honours fences (fm 2, 3,
// 4 wait for earlier READs/atomics) and writes CQEs in posting order, one per
// WQE with ce = 2 or 3 (CQE and error CQE timestamps are nanoseconds since
// the process started). Checks and their syndromes follow mlx5-prm.md 6.5:
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
// the IBA). The failing WQE gets an error CQE even when unsignaled, the QP
// moves to ERR, and every later WQE (outstanding or posted later) completes
// with WR_FLUSH_ERR, one CQE each. A responder-side class C error (access,
// invalid request) also moves the responder QP to ERR; a responder receive
// error writes a RESP_ERR CQE.
//
// The responder accepts requests in RTR and RTS only, from the QP's
// remote_qpn at its remote GID, with the expected PSN (a PSN ahead is
// NAKed as a sequence error once; a duplicate is re-ACKed, a duplicate READ
// re-executed, a duplicate atomic answered from the saved result). ACKs are
// cumulative: the requester asks for one on the last packet of every
// message. Standard 8-byte atomics act on the target in the host's byte
// order (atomic_req_8B_endianness_mode = 1) and return the original value in
// host order; masked atomics treat target and returned value as big-endian
// (mlx5-prm.md 2.3.3, 3.7, open question 5). Host-memory atomics are atomic
// with respect to CPU atomics on the same word.
//
// CQs: with oi = 0 the CQ stops at 2^log_cq_size unconsumed CQEs (the
// consumer index is read from the CQ DBR): status overflow (0x9) and the QP
// that could not complete goes to ERR. With oi = 1 entries are overwritten.
// Collapsed CQs (cc = 1) write every CQE to entry 0. QUERY_CQ and QUERY_QP
// report the live state and counters (state, hw/sw SQ counters, PSNs,
// producer/consumer counters).
//
// # Threading and lifetime
//
// Commands are serialised per NIC by one lock; the data path reads lock-free
// snapshots of the QP, CQ and MR tables. Each QP has a requester lock (held
// by the engine while it transmits) and a responder lock (held while a
// request is executed). In-process delivery is synchronous: a request runs
// the responder on the sender's goroutine; responses (ACK, NAK, READ
// response, ATOMIC ACK) are queued for the requester NIC's engine, so no
// lock is held across a Send that the receiving side takes. Everything here
// is safe for concurrent use. Objects must be released before their device
// is closed.
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
//   - The requester asks for an ACK on the last packet of every message,
//     whatever log_ack_req_freq says (ACKs are cumulative, so only timing
//     differs).
//   - RoCE only: the GID table has one entry (index 0, RoCE v2, IPv4).
package emu
