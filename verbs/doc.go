// Package verbs is the DOCA Verbs host API of DOCA GPUNetIO 3.0 in idiomatic
// Go: RDMA devices, the device object (Dev),
// protection domains, memory regions, UMEMs, UARs, completion queues, shared
// receive queues and RC (and UC) queue pairs, created and driven with PRM
// commands over DevX. The same code runs on real mlx5 devices (through
// rdma-core, driver "devx") and on the emulated ConnectX devices emu0, emu1,
// ... (driver "emu"): both sit behind one driver boundary and receive the
// very same command bytes, so everything this package does is tested
// without hardware.
//
// DOCAFunctions maps every function of DOCA GPUNetIO 3.0's doca_verbs.h to
// its Go counterpart (attribute objects become plain configuration structs:
// CQConfig, QPConfig, SRQConfig, QPAttr, AHAttr; their setters and getters
// become fields). Calls are named after the DOCA or ibverbs function they
// mirror in every error they return. DOCASDKFunctions does the same for
// the host functions of the DOCA SDK (3.3) that 3.0 lacks,
// DOCAEventFunctions for the SDK's completion-channel and
// asynchronous-event functions, and DOCASDKNotProvided lists the SDK
// functions this package does not provide, with the reason.
//
// # Objects and creation order
//
// OpenDevice opens a device by its exact name (OpenDevicePrefix keeps the
// DOCA examples' prefix match). On the Context: AllocPD; on the PD, RegMR
// (data buffers), NewSRQ and OpenDev, the device object of DOCA 3.0
// (doca_verbs_dev_open). On the Dev: NewUMem (memory for rings, in host or
// GPU memory), NewUAR (a doorbell page), NewCQ and NewQP (whose PD is the
// Dev's). The package-level NewUMem, NewUAR, NewCQ and NewQP, which take a
// Context as DOCA 2.0 did, remain for source compatibility, in open mode
// only (deprecated). A QP starts in RST and is moved to RTS with ConnectRC
// (or step by step with Modify) after the peers exchange QPN, GID,
// addresses and rkeys out of band. CQs, QPs and SRQs created without external UMEMs or UAR
// allocate their own: rings and doorbell records in mmap'd host memory
// registered as an internal UMEM, and an internal UAR (CQs: a dedicated
// non-cached page, falling back to the shared non-cached page when the
// library answers EOPNOTSUPP as rdma-core before v45 does, then BlueFlame;
// QPs: BlueFlame, then non-cached).
//
// # Lifetime
//
// Close is explicit, idempotent (a second Close returns nil) and ordered:
// every object references the objects it was made from (a QP its PD, CQs,
// SRQ, external UMEMs and UAR; a CQ its UMEMs and UAR; an MR, SRQ or QP its
// PD; a Dev its PD; a UMEM, UAR, CQ or QP made on a Dev that Dev; every
// object its Context), and an object that is still referenced refuses to
// close with ErrInUse, naming each user ("CQ 0x402 on emu0 is still
// referenced 2 time(s), by QP 0x105 on emu0 (2)"), and stays fully usable.
// So teardown runs children first: QPs, then SRQs and CQs, then MRs, UMEMs
// and UARs, then the Dev (DOCA 3.0: it outlives everything made with it),
// then PDs, then the Context. Internal rings, UMEMs and
// UARs are released by the object that made them, and referenced by it
// meanwhile (QP.UAR and CQ.UAR cannot be closed under their QP or CQ). A
// call on a closed object (and a create on a closed parent) fails with
// ErrBadState naming the call and the object.
//
// Code built on this package that uses an object without being made on it
// takes a Hold (QP.Hold, CQ.Hold, UAR.Hold, ... on every object): until
// Hold.Release, Close of the object fails with ErrInUse naming the holder.
// Package gpunetio holds every QP and CQ it exports and every UAR page it
// maps into a GPU, so a GPU kernel or the CPU proxy never writes a doorbell
// page or ring that was freed; taking the hold also refuses a closed object
// (ErrBadState).
//
// A nil pointer or a zero value (&QP{}) is not an object: every method
// refuses it with ErrInvalidValue naming the call, and the getters return
// zero values. Sizes and ranges are checked before any driver sees them:
// RegMR and NewUMem refuse lengths beyond the device's max_mr_size
// (DeviceAttr.MaxMRSize), ranges that wrap or end beyond 2^57 (no 64-bit
// Linux maps user memory there) and unknown access bits; objects of
// another device are refused with ErrInvalidValue. A failed call leaves
// nothing referenced.
//
// No finalizer is set anywhere: resources are released only by Close. The
// memory under a UMEM or MR belongs to the caller and must outlive it.
// LiveObjects counts the open objects of each kind; OpenObjects lists each
// open object and unreleased Hold with its users and, when RecordStacks (or
// GPUNETIO_VERBS_STACKS=1) is on, the stack that made it; LeakReport
// formats them. This package's tests fail when any object is left open.
//
// # Threading
//
// Different objects may be used from different goroutines freely; the
// drivers are safe for concurrent use. On one object:
//
//   - Getters (QPN, CQN, WQ, Ring, DBRAddr, DoorbellAddr, Config, ...)
//     return values fixed at creation and are safe at any time.
//   - QP.Modify and QP.Query may be called concurrently: Modify serializes
//     on the QP (DOCA leaves concurrent modify calls unsafe), and the state
//     used as the current state is the one cached by the last successful
//     Modify, as in DOCA (or ERR, once the device was seen to move the QP
//     there; see QP.State).
//   - QP.PostSend, QP.PostRecv, SRQ.PostRecv and CQ.Poll each serialize on
//     their queue, so several goroutines may post to one QP or poll one CQ
//     (each completion is returned to one of the pollers).
//   - Close may race with any other call on the object: it waits for the
//     calls that touch the object's rings, doorbells or device object
//     (posts, polls, Modify, Query) to return, and every such call that
//     starts after it fails with ErrBadState, so none touches freed memory.
//     Close of a parent racing with creates of children is safe (one of
//     them fails cleanly).
//
// # The host data path and its memory requirement
//
// PostSend, PostRecv and Poll are the host-side data path (what DOCA's
// bridge post and poll do): they encode WQEs with the same PRM encoders the
// emulator decodes, write the doorbell record, ring the doorbell with one
// 64-bit store, and poll CQEs by owner bit. They read and write the rings
// from the CPU, so they require the rings in host memory: CQs, QPs and SRQs
// created without external UMEMs, or with UMEMs over host memory. Rings in
// GPU memory are posted to and polled by GPU code instead (package
// gpunetio); calling the host data path on them is not supported. A
// collapsed CQ (every CQE written to entry 0) cannot be polled with Poll
// (ErrNotSupported); read its entry 0 directly. Data buffers given to RegMR
// must not be Go heap memory: use mmap, C or CUDA allocations (the NIC, or
// the emulator, reads and writes them behind the Go runtime's back).
// PollWait polls with a timeout and fails with ErrTimeOut instead of
// blocking forever (a timeout of 0 or less polls once); PollWaitContext
// polls until its context ends, with no bound of its own. Both spin and
// cost CPU while they wait: the blocking wait is a completion channel
// (see Completion channels and asynchronous events below).
//
// # Errors of queues
//
// An error completion (a WC with a non-zero Status) moves its QP to ERR on
// the device. QP.State reports it: Poll records ERR when it returns an
// error completion, and State asks the device (QUERY_QP) while the QP is in
// RTR or RTS, where the device moves it by itself. Work requests posted to
// a QP in ERR are flushed by the device with WCWRFlushErr completions.
//
// A CQ can fail as a whole: when a completion finds its ring full (overrun:
// more completions outstanding than entries, unless CQConfig.Overrun) or
// cannot be written. The device then writes no more completions to it and
// moves its QPs to ERR. Poll returns the completions written before, then
// an error with ErrIOFailed wrapping a *CQError (the CQ number and the
// CQStatus QUERY_CQ reports, CQStatusOverflow or CQStatusWriteFail), on
// every call; PollWait ends with it instead of timing out; CQ.Err asks the
// device at any time (for CQs polled by GPU code too). Poll asks the device
// when it finds the ring empty after a whole ring of completions since it
// last asked (an overrun needs that many), and every 10 ms otherwise.
// PostSend and PostRecv refuse work requests whose completions would go to
// a CQ known to be in error (ErrIOFailed): the device would drop them.
//
// A CQ whose ring is an external UMEM must have its ring initialised by
// its owner before NewCQ, every CQE invalid and hardware-owned (op_own
// byte 0xF1, or rdma-core's 0xF0): neither the device nor this package
// writes it, since it may be GPU memory. A zeroed ring reads as valid
// completions of QP 0; Poll refuses any CQE naming a QP that never
// completed to the CQ with ErrUnexpected instead of returning it.
//
// # Connecting two QPs
//
// Endpoint is what the peers exchange: GID, LID, QPN, PSN, MTU and the
// Regions (address, length, rkey) the peer may access. QP.LocalEndpoint
// fills it for a QP from its port and GID table (and keeps the port, GID
// index and link layer for ConnectRC); MR.Region describes a registered
// buffer. The transport is the application's (TCP, typically):
//
//	local, err := qp.LocalEndpoint(1, gidIndex)
//	local.Regions = []verbs.Region{mr.Region()}
//	remote, err := verbs.ExchangeEndpointDOCA(conn, local.Endpoint, 1)
//	err = qp.ConnectRC(local, remote, nil)
//
// Two encodings exist. The DOCA encoding (MarshalDOCA, WriteEndpointDOCA,
// ReadEndpointDOCA, ExchangeEndpointDOCA) is the byte stream the DOCA
// GPUNetIO examples send: for each region its address (8 bytes) and rkey
// (4), then QPN (4), GID (16) and LID (4), little-endian, no framing. It
// carries no region count, length, PSN or MTU: the reader says how many
// regions to expect, decoding yields PSN 0, MTU 4096 and length 0 (what a
// DOCA peer uses), and encoding an endpoint with another PSN or MTU fails
// instead of dropping it. Both sides write their endpoint before reading the
// peer's, which is the order that works against the DOCA examples as server
// or as client. The self-describing encoding (MarshalBinary, WriteEndpoint,
// ReadEndpoint, ExchangeEndpoint: magic "GDEP", version, region count, then
// every field) is for Go peers. Decoders check exact lengths, counts (at
// most MaxEndpointRegions), QPN, LID, PSN and MTU ranges and fail with
// ErrInvalidValue, ErrTooBig or ErrUnsupportedVersion naming the field.
//
// ConnectRC runs RST -> INIT -> RTR -> RTS with the DOCA examples' values:
// path MTU the smaller of the two endpoints' MTUs, PSNs from the endpoints,
// port 1, ack timeout 14, retry count 7, RNR retry 7 (forever, as
// perftest: DOCA's examples use 1, which fails a SEND whose receive the
// peer posts a little late), min RNR timer 1,
// remote write and read allowed, IB-spec atomics, P_Key index 0, and an AH
// with hop limit 255 from the local GID index to the remote GID (RoCE) or,
// on an InfiniBand link layer, without GRH to the remote LID. Every value
// can be overridden through ConnectOptions, whose optional fields are
// pointers so that a meaningful zero (ack timeout 0: wait forever) is not
// mistaken for "default". RCTransitions returns the three steps without
// applying them. A failed transition returns the QP to RST.
//
// The peer may send as soon as this QP reaches RTR, possibly before
// ConnectRC returns. Receives for its first SENDs are posted in INIT:
// ConnectOptions.RecvWRs lists receives ConnectRC posts right after RST ->
// INIT, and ConnectOptions.AfterInit is called there (to post to an SRQ,
// or anything else that must precede RTR).
//
// # QP transitions
//
// Modify applies the QPAttr fields named in the mask. The transitions that
// exist, and the mask bits each requires and allows besides
// QPAttrCurrentState and QPAttrNextState (anything else is refused with
// ErrInvalidValue naming the missing or extra bits). The transitions and
// the fields each one takes are the PRM's (the QP transition commands of a
// ConnectX, which leave ERR only for RST or ERR again); which mask bit stands for which
// field is this package's mapping:
//
//	transition    required                                      also allowed
//	any -> RST    -                                             -
//	any -> ERR    -                                             -
//	RST -> INIT   PKEY_INDEX, PORT_NUM,                         ATOMIC_MODE
//	              ALLOW_REMOTE_WRITE, ALLOW_REMOTE_READ
//	INIT -> INIT  -                                             PKEY_INDEX, PORT_NUM,
//	                                                            ALLOW_REMOTE_WRITE, ALLOW_REMOTE_READ,
//	                                                            ATOMIC_MODE
//	INIT -> RTR   RQ_PSN, DEST_QP_NUM, PATH_MTU, AH_ATTR,       PKEY_INDEX, ALLOW_REMOTE_WRITE,
//	              MIN_RNR_TIMER                                 ALLOW_REMOTE_READ, ATOMIC_MODE,
//	                                                            MAX_DEST_RD_ATOMIC
//	RTR -> RTS    SQ_PSN, ACK_TIMEOUT, RETRY_CNT, RNR_RETRY     MIN_RNR_TIMER, ALLOW_REMOTE_WRITE,
//	                                                            ATOMIC_MODE, MAX_QP_RD_ATOMIC
//	RTS -> RTS    -                                             ALLOW_REMOTE_WRITE, ALLOW_REMOTE_READ,
//	                                                            ATOMIC_MODE, MIN_RNR_TIMER, AH_ATTR
//
// With AH_ATTR, RTS -> RTS applies two fields of the AH, the source GID index and,
// on RoCE v2 with the rts2rts_qp_dscp capability, the DSCP of the traffic
// class, as DOCA does; a ConnectX takes no other field of the primary
// address path in RTS (it moves an RC QP to another remote address only
// through path migration, which this package does not support). An AH that
// changes anything else of the path given at INIT -> RTR (remote GID,
// address type, LID, SL, static rate, hop limit) is refused with
// ErrNotSupported instead of being ignored; to reach another peer, move
// the QP to RST and connect it again.
//
// The remote atomic mode (QPAttr.RemoteAtomic) is applied, as in DOCA 3.0,
// only with ATOMIC_MODE in the mask: RST -> INIT programs it (remote atomics
// enabled, qpc.rae, and the mode, qpc.atomic_mode, when it is not
// AtomicNone), and the later transitions change it with the PRM optional
// bit RAE. A QP never given a mode answers every atomic with a remote
// access error: the requester's completion is WCRemAccessErr, as on a
// ConnectX. INIT -> RTR logs DOCA's WARNING when RemoteAtomic is set
// without its bit. Values are checked for the fields in the mask: path MTU
// 256..4096, ack timeout 0..31, retry count 0..7, RNR retry 0..7, min RNR
// timer 0..31, port 1..the device's port count, pkey index up to the
// device's, sgid index below the GID table size, the atomic mode one of the
// nine of DOCA 3.0, MaxRDAtomic and MaxDestRDAtomic 0 (one outstanding
// request, as DOCA 3.0 programs it) or powers of two up to the device
// limits. PSNs are masked to 24 bits in a copy (the caller's QPAttr is
// never written).
//
// # SDK mode
//
// DOCA GPUNetIO 3.0 can run the control path through NVIDIA's DOCA SDK
// instead of its own implementation. Here, as there, DOCA_SDK_LIB_PATH
// naming the SDK's library directory asks for it: the SDK's shared
// libraries are loaded at run time (nothing links against them). The mode
// is decided once per process, when the first object is made (or SDKMode is
// called), and never changes: SDK mode only if libdoca_common.so,
// libdoca_verbs.so and libdoca_gpunetio.so load from the directory with
// every entry point SDK mode needs; otherwise open mode for the whole
// process, with DOCA's log lines saying why (DOCA_GPUNETIO_LOG=4 or more
// shows them). SDKMode reports the decision. The creators print DOCA's
// lines too ("Use DOCA Verbs CQ SDK", "Use DOCA Verbs CQ open",
// "doca_verbs_cq_open=0x... was created", at INFO, 6), through the logger
// package gpunetio configures (SetLogLevel, SetLogger), filtered by
// DOCA_GPUNETIO_LOG.
//
// In SDK mode the objects DOCA 3.0 routes are the SDK's: Dev (the SDK's
// doca_dev, opened from the PD), UMEM, UAR, CQ, QP and the attribute
// objects of their creation and modification; the Go API is the same, and
// each object's getters read the SDK's getters once, at creation, so
// package gpunetio exports SDK QPs to kernels in the same device-struct
// layout. Contexts, PDs, MRs, SRQs and device attributes stay open (DOCA 3.0
// does not route them). What differs: SDK mode drives real mlx5 devices
// only (an emulated device has no rdma-core PD for the SDK); the host data
// path (PostSend, PostRecv, Poll, CQ.Err) and the Context-taking creators
// are refused with ErrNotSupported; SRQs and EmulateNoDBRExt cannot be used
// with SDK QPs; Query reports the state only; UAR.DBRLessAddr is 0. The QP
// ordering semantic (QPConfig.OrderingSemantic) is an SDK-only feature: in
// open mode anything but OrderingIBTA is refused with ErrNotSupported
// naming SDK mode. Objects of the two modes never mix: arguments of the
// other mode are refused with ErrInvalidValue. SDK failures are
// ErrInitialization in a creator and ErrUnexpected elsewhere, with an
// *SDKError naming the SDK function in the chain.
//
// The SDK mode has been tested against a stand-in of the SDK written for
// this module's tests (internal/docasdk/fakesdk), not against NVIDIA's
// SDK.
//
// # Differences from DOCA Verbs
//
// Behaviour DOCA gets wrong and this package fixes:
//
//   - A CQ with internal memory programs its doorbell-record UMEM id (DOCA
//     leaves it 0 although the DBR lives in the ring's UMEM).
//   - Internal CQ rings start with every CQE invalid and owned by hardware
//     (op_own 0xF1), so owner-bit pollers, host or GPU, work from the first
//     completion (DOCA leaves them zeroed).
//   - Non-zero external ring offsets of CQs and QPs are refused with
//     ErrInvalidValue (DOCA ignores the CQ's and does not give the QP's to
//     firmware, so host and NIC disagree about where the ring is).
//   - Query maps a path MTU of 0 (never programmed) to the zero value
//     instead of failing.
//   - OpenDevice matches the exact name (DOCA matches a prefix, so mlx5_1
//     can open mlx5_10); OpenDevicePrefix keeps the old behaviour.
//   - RoCE MAC resolution uses the port cached from RST -> INIT (DOCA always
//     uses port 1); the RoCE v2 UDP source port comes from a generator
//     seeded once (DOCA reseeds rand from the time on every INIT -> RTR).
//   - MaxRDAtomic and MaxDestRDAtomic must be powers of two within the
//     device limits (DOCA only rejects 0), and ack timeout, retry counts and
//     the min RNR timer are range-checked (DOCA truncates them silently to
//     the PRM field widths).
//   - Modify checks a nil AH before using it (DOCA dereferences it first).
//   - The user index must fit 24 bits (the PRM field; DOCA 3.0 dropped the
//     check).
//   - A QP moved to RST has its own host rings cleared, not external UMEMs,
//     which may be GPU memory.
//   - In SDK mode the mode is latched for the process, mixed-mode
//     arguments are refused, the SDK's verbs context is imported once per
//     Dev, and a failed SDK registration of GPU memory is an error (DOCA
//     3.0 decides per call, reads SDK objects as open ones, imports a
//     context per object without releasing it, and falls back to open mode
//     silently).
//   - Close of an object that is still in use returns ErrInUse and keeps
//     the object (DOCA would destroy it under its users).
//   - A CQ's internal UAR tries a dedicated non-cached page first (DOCA asks
//     for the shared non-cached page, then BlueFlame).
//   - Objects of another device, sizes beyond the device's limits or the
//     address space, unknown access bits, ports and GID indexes the device
//     lacks are refused with ErrInvalidValue before the driver sees them
//     (DOCA passes them to rdma-core or firmware).
//   - An atomic's result buffer must have the operand's size (8 bytes, or
//     AtomicSize for masked atomics); PostRecv refuses SGE lengths of 0 and
//     2^31 or more, as PostSend does.
//
// Extensions: UC queue pairs can be created (QPTypeUC; DOCA creates RC only,
// and DeviceAttr.QPTypeSupported still reports DOCA's answer), and the host
// data path (PostSend, PostRecv, Poll) is part of the package.
//
// # Wait-on-CQ work requests
//
// A QP created with QPConfig.CoreDirectMaster can post a wait-on-CQ work
// request (SetWaitCQPIWR, opcode WRWaitCQ; the SDK's
// doca_verbs_bridge_set_wait_cq_pi_wr): its send queue stalls until a CQ
// of the same device has produced a given CQE, and the work requests
// posted after it start only then, with no host step in between. A
// signaled wait completes with WCWait (DOCA: IBV_WC_DRIVER1).
// CQ.ConsumerIndex and CQ.ProducerIndex give the positions to wait for.
// examples/verbs_wait_cq_wr chains two QPs this way.
//
// # Interop with IB Verbs
//
// A program that holds rdma-core objects brings them in, and one that
// needs rdma-core calls takes ours out, as unsafe.Pointer values (the SDK's
// bridge calls): OpenIBVDevice (a struct ibv_device *), ImportIBVContext (a
// struct ibv_context * opened with DevX, left open at Close),
// Context.ImportIBVPD (a struct ibv_pd *, left allocated at Close),
// Context.IBVContext and PD.IBVPD. Context.ExportHandle and
// PD.ExportHandle give the handles ImportContextHandle and
// Context.ImportPDHandle take in another process (rdma-core's
// ibv_import_device and ibv_import_pd, v32 or newer). On an emulated
// device these calls fail with ErrNotRDMACoreDevice (code
// ErrNotSupported).
//
// # Completion channels and asynchronous events
//
// A host program waits for completions without spinning on a completion
// channel (CompChannel, doca_verbs_comp_channel): create it on the Context
// (Context.NewCompChannel), give it to the CQs it serves
// (CQConfig.CompChannel), arm a CQ for its next completion (CQ.ReqNotify;
// solicited completions only on request), and block in
// CompChannel.GetEvent, which takes a context.Context and returns the CQ
// of the next event; acknowledge events with CQ.AckEvents (a CQ with
// events received and not acknowledged refuses Close with ErrInUse
// wrapping ErrUnackedEvents, where DOCA and rdma-core would wait). Each arm
// gives one event: poll the CQ empty after re-arming. A program with its
// own epoll loop waits on CompChannel.FD (nonblocking, readable while an
// event is pending) and takes events with TryGetEvent. This is the
// documented blocking wait: PollWait and PollWaitContext poll (the first
// bounded by a timeout, a timeout of 0 or less polling once; the second
// by its context only) and cost CPU while they wait.
//
// Asynchronous events (doca_verbs_get_async_event and friends) report
// what happens to objects outside their completions: see
// Context.GetAsyncEvent and AsyncEventType.
//
// Behind both, the device writes event queue entries (EQEs) to event
// queues (CREATE_EQ): a COMP entry when an armed CQ completes, CQ_ERROR,
// the QP and SRQ events, port changes and fatal errors on the
// asynchronous queue. On a ConnectX the kernel owns the EQs and forwards
// the entries to DevX event channels (mlx5dv_devx_subscribe_devx_event);
// the emulated devices do the same, their emulated kernel reading the
// EQEs their emulated firmware writes with the PRM's owner-bit protocol.
//
// # Errors
//
// Every failing call returns a *Error carrying the operation (the DOCA or
// ibverbs call it mirrors), a DOCA error code (Code, with the values of
// doca_error_t), a message naming the field or object at fault and the
// underlying cause. As in DOCA 3.0, a creator (Dev.NewUMem, NewUAR, NewCQ,
// NewQP) fails with ErrInitialization whenever the object cannot be built,
// wrapping the specific error (ErrInvalidValue, ErrNotSupported,
// ErrDriver), which errors.Is still finds; a nil Dev or argument is
// ErrInvalidValue directly. Causes: a syscall.Errno from the kernel or library, or a
// *FirmwareError with the PRM command, status (FirmwareStatus, by name) and
// syndrome when the device refused a command. errors.Is matches the DOCA code
// (errors.Is(err, verbs.ErrInvalidValue)) as well as the cause (errors.Is(err,
// syscall.EOPNOTSUPP)); errors.As reaches the *FirmwareError.
//
// Error completions are not call errors: Poll returns them as WCs with a
// non-zero Status (a CQ in error is one: ErrIOFailed with a *CQError, see
// above). WC.Err turns one into a *CompletionError (QPN, WR ID,
// opcode, status, vendor syndrome, WQE counter), which matches its status
// with errors.Is (errors.Is(wc.Err(), verbs.WCRemAccessErr)). The codes follow DOCA for the same condition:
// ErrInvalidValue for bad arguments, sizes and transitions, ErrNotSupported
// for capabilities the device lacks, ErrDriver for failures of the driver
// or firmware; ErrInUse and ErrBadState report the lifetime mistakes DOCA
// does not detect, ErrIOFailed a CQ the device put in error, and
// ErrNotFound a device name that does not exist.
package verbs
