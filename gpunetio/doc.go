// Package gpunetio is the DOCA GPUNetIO 3.0 host API in idiomatic Go: GPU
// handles and memory, export of verbs QPs, CQs and UARs to CUDA kernels, the
// CPU proxy and its service, and the high-level QP helpers. DOCAFunctions
// maps every function of doca_gpunetio.h and doca_gpunetio_high_level.h to
// its Go counterpart (verbs.DOCAFunctions those of doca_verbs.h);
// LibraryVersion reports 3.0.0 (0x030000) and the compatibility checks
// accept device code 2.0.0..3.0.0 and host code 0.2.0..3.0.0, as DOCA 3.0
// does.
//
// # Objects and lifetime
//
// NewGPU opens a GPU by PCIe address ("8A:00.0", "0000:8a:00.0", any case)
// and retains its primary CUDA context; every CUDA call runs with that
// context current on the calling OS thread (package cuda), so callers never
// manage CUDA contexts. GPU.MemAlloc returns a *Mem (Dev, Host, Size, Type)
// recorded in the GPU's allocation table; GPU.Close refuses with
// ErrInvalidValue while anything is live, exactly like doca_gpu_destroy.
//
// GPU.ExportQP builds the exported QP (*QP) and its host template of struct
// doca_gpu_dev_verbs_qp, with the receive queue and receive CQ when it is
// given one (for the two-sided device API: doca_gpu_dev_verbs_recv,
// doca_gpu_dev_verbs_recv_wait); QP.DeviceQP copies it to GPU memory once and
// returns the address kernels take. GPU.ExportQPs puts several device QPs in
// one array (*DevQPArray). Tear down in reverse: kernels, services
// (Service.Close or Unmonitor), DevQPArray.Close and FlatList.Close,
// QP.Close, then the verbs QP, CQ, UMEMs, memory, UAR, GPU. Close is
// idempotent everywhere and refuses (ErrInUse) where DOCA would leave
// dangling pointers: a QP in a live array or flat list or monitored by a
// service cannot be unexported, and the QPs of a QPGroupHL close only with
// the group.
//
// Every object that uses a verbs object holds it (verbs Hold): an exported
// QP holds its verbs QP and send CQ until QP.Close, and each GPU.ExportUAR
// holds its UAR until its UnexportUAR. Closing a held verbs object, or one
// it uses (its UAR, UMEMs, PD), fails with ErrInUse naming the export, so
// neither a kernel nor the CPU proxy ever stores to a doorbell page or ring
// that was freed. The entries that take verbs objects (ExportQP, ExportUAR,
// CanGPURegisterUAR, NewQPHL, NewQPGroupHL) refuse closed ones with
// ErrBadState. Memory this package allocates for an object (a QPHL's rings
// and doorbell records, a device QP, a proxy mailbox, an array or flat
// list) belongs to it: Mem.Free and GPU.MemFree refuse it with ErrInUse
// naming the owner, which frees it when it closes. Memory registered with
// Mem.RegMR is not freed while the region is open (ErrInUse naming it).
//
// A nil pointer or zero value (&QP{}) is not an object: every method
// refuses it with ErrInvalidValue and getters return zero values. MemAlloc
// refuses sizes whose rounding and alignment would not fit (ErrInvalidValue)
// and reports allocator failures (ErrNoMemory, ErrDriver); DevQPArray.At
// refuses indexes outside the array. OpenObjects and LeakReport name every
// open GPU, allocation, export, array, high-level QP, group, flat list and
// service, with the stack that made it when RecordStacks (or
// GPUNETIO_STACKS=1, which also turns on the verbs and cuda recording) is
// on; this package's tests fail on any leak, here or in verbs or cuda.
// Package gpunetio/leaktest gives a user's tests the same check:
// func TestMain(m *testing.M) { leaktest.Main(m) }.
//
// NewQPHL makes the whole GPU QP in one call (CQ and QP with rings in GPU
// memory, exported) on the device object QPHLConfig.NetDev (verbs.OpenDev;
// DOCA 3.0), or on one it opens on QPHLConfig.PD and closes with the QP. As
// in 3.0, the CQ's ring and doorbell record share one GPU buffer of
// align_up(n*64+8, 4096) bytes and one UMEM. QPHL.LocalEndpoint and
// QPHL.ConnectRC connect it to a peer (see package verbs for the endpoint
// encodings and the defaults), and GPUQP().DeviceQP() is what kernels take.
// QPHLConfig.RQWQEs adds a receive queue (the SDK-era high-level
// attributes' rq_nwqe): its 16-byte receive WQEs at the start of the work
// queue, before the SQ, a receive CQ of as many entries in GPU memory
// (QPHL.RecvCQ, RecvCQRing), and the receive doorbell record (word 0 of the
// QP's record) in memory device code writes in every NIC handler mode (CPU_GPU
// memory where a CPU helper writes the send record). QPHLConfig.RecvInline
// (recv_inline) puts receives of at most 32 bytes in their CQE.
//
// The device structs have one definition, the C header
// cuda/include/common/doca_gpunetio_verbs_dev.h; internal/devstruct takes
// their layout from it through cgo.
//
// # SDK mode
//
// With DOCA_SDK_LIB_PATH naming the DOCA SDK's library directory, the
// control path runs through NVIDIA's DOCA SDK, loaded at run time (see
// package verbs, "SDK mode", for the decision, which is taken once per
// process). SDKMode reports it; `gpunetio version` and `gpunetio doctor`
// print it. In SDK mode NewGPU opens the SDK's GPU handle too
// (doca_gpu_create), MemAlloc, MemFree and GetDmabufFD go through it, and
// the high-level QPs make their UMEMs (GPU memory through
// doca_umem_gpu_create), UAR, CQ and QP through the SDK. Export has no SDK
// path, as in DOCA 3.0: it builds the same device QP (struct
// doca_gpu_dev_verbs_qp) from the verbs getters, which read the SDK's, so
// kernels do not change. That holds for the receive half too: the receive
// ring, its size and WQE size (doca_verbs_qp_get_wq), doorbell-record word 0
// (doca_verbs_qp_get_dbr_addr) and the receive CQ (doca_verbs_cq_get_wq,
// _get_dbr_addr, _get_cqn) go into our layout; the SDK's
// doca_gpu_verbs_export_qp is not called and its struct not translated (it
// has the SDK's own layout, which differs between releases, and its receive
// submit path differs; see cuda/README.md, "Device QP layout"). The QP ordering semantic
// (QPHLConfig.OrderingSemantic) is SDK-only: elsewhere anything but
// verbs.OrderingIBTA is refused with ErrNotSupported naming SDK mode. A GPU
// of one mode and a device object of the other do not mix
// (ErrInvalidValue); NewHostGPU is always open mode. SDK failures are
// ErrInitialization when a GPU handle cannot be opened and ErrUnexpected
// elsewhere, with a *verbs.SDKError naming the SDK function. SDK mode has
// been tested against a stand-in of the SDK written for this module's tests
// only, not against NVIDIA's SDK.
//
// Logging: the library's messages, DOCA's texts at DOCA's levels (the SDK
// loader's decision, "Use DOCA ... SDK|open" at every creator in package
// verbs and here, SDK failures), go to one logger filtered by
// DOCA_GPUNETIO_LOG (0..7; the default 0 prints nothing): SetLogLevel and
// SetLogger govern package verbs' messages too. They are log/slog records
// by default; SetLogFormat(LogFormatDOCA) (or GPUNETIO_LOG_FORMAT=doca)
// prints DOCA's own lines instead, "<date> [<LEVEL>] [<file>]: <line>:
// <function>(): <message>", to stderr or the writer of SetLogOutput.
//
// # NIC handlers and the CPU proxy
//
// Export resolves AUTO to GPU_SM_DB when the QP's doorbell page can be
// mapped into the GPU (GPU.ExportUAR: registered once per 4 KiB page,
// refcounted by host page; with CU_MEMHOSTREGISTER_IOMEMORY only for a real
// NIC's MMIO page, an emulated UAR being host memory), else to CPU_PROXY;
// NO_DBR_EXT QPs and SW-emulated no-DBR make it GPU_SM_NO_DBR. QP.CPUAssisted
// tells whether a CPU thread must call QP.ProgressProxy (or a Service must
// monitor the QP). ProgressProxy rings the doorbell exactly as DOCA's CPU
// proxy does (see its doc), with single 64-bit MMIO stores and a device write barrier (internal/mmio).
// Calls on one QP are serialised internally.
//
// The Service runs one goroutine locked to its OS thread. It progresses all
// monitored QPs until none progressed, then spins briefly and sleeps with a
// back-off from 50 us to 1 ms, so an idle service does not hold a core.
//
// # Memory types
//
// MemGPU is device memory with SYNC_MEMOPS. MemCPUGPU is mmap'd host memory
// registered with CUDA. MemGPUCPU needs GDRCopy, loaded at run time
// (internal/gdrcopy; DOCA_GPUNETIO_DISABLE_GDRCOPY=1 turns it off, and
// GDRCOPY_PATH_L names the libgdrapi file to load instead of
// libgdrapi.so.2, as for DOCA; its absence is logged once at WARNING);
// without it MemAlloc fails with ErrNotSupported saying "GDRCopy (libgdrapi.so.2 and
// the gdrdrv module) is required" instead of DOCA's silent fallback to host
// memory. NewGPU also plugs the GPU's memory into the emulated NIC
// (internal/emugpu), so QPs whose rings live in GPU memory work on emu*
// devices; the hook is process-wide and removed when the last GPU closes.
// QPHLConfig.RingMem MemCPUGPU puts a high-level QP's rings and doorbell
// record in MemCPUGPU memory (registered with the NIC as host memory), for
// hosts where the NIC cannot reach GPU memory.
//
// # Differences from DOCA
//
//   - GPU.Close with live allocations fails with ErrInvalidValue and keeps
//     the GPU usable (DOCA 3.0 frees the handle anyway, leaking the
//     allocations).
//   - QPHLConfig.NetDev may be left nil: the high-level QP then opens (and
//     closes) a device object on QPHLConfig.PD, so DOCA 2.0 programs keep
//     working; NewQPGroupHL checks the device object too (DOCA 3.0 does
//     not).
//   - GPU.DmabufFD remains as a deprecated alias of GetDmabufFD.
//   - Export works with the QP's internal or external UAR (DOCA crashes on
//     an internal one).
//   - Export uses the QP's cached send DBR mode instead of a hardware query.
//   - The SW-emulated helper of a GPU-SM QP gets the QPN for its doorbell.
//   - ProgressProxy returns ErrBadState when the watched device QP does not
//     exist (before DeviceQP, after DevQPArray.Close); ExportQPs frees an
//     earlier DeviceQP copy instead of leaking it.
//   - UAR exports are keyed by host page; the proxy mailbox is freed through
//     its Mem.
//   - CPU_GPU memory is page-rounded, zeroed and honours alignment.
//   - GPU_CPU without GDRCopy is an error, not host memory.
//   - A failed high-level create cleans up everything; a UAR that cannot be
//     created is an error.
//   - Group Close destroys the companion, then the main QP, then the UAR.
//   - A flat-list copy failure frees the array and returns ErrDriver.
//   - The service flag is atomic; Service.Unmonitor exists.
//   - High-level SQ rings and DBRs are zeroed.
//   - CPU_PROXY with SW-emulated no-DBR runs the full proxy sequence on the
//     mailbox.
//   - CanGPURegisterUAR, ExportUAR and UnexportUAR are GPU methods (the CUDA
//     context is explicit in Go); the probe answer is cached per GPU.
//   - Export rejects (ErrInvalidValue) a CQ that is not the QP's send CQ and
//     an SQ of more than 32768 WQEBBs (sq_wqe_num is 16 bits).
//   - Exports hold the verbs QP, CQ and UAR they use (DOCA lets them be
//     destroyed under a running proxy or kernel); a flat list keeps its QPs
//     from being destroyed.
//
// # Threading
//
// Every exported function and method is safe for concurrent use, except
// that QPHL, QPGroupHL and FlatList must not be closed concurrently with
// their own use. Nothing blocks without bound.
package gpunetio
