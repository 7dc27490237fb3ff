// Package devx is the rdma-core driver of the mlx5 driver boundary: real
// ConnectX devices opened with a DevX context through libibverbs and libmlx5.
// It registers itself with mlx5.RegisterProvider under the name "devx";
// import it for its side effect and use mlx5.Devices and mlx5.Open.
//
// # Loading
//
// Nothing links against rdma-core. rdma-core's headers (<infiniband/verbs.h>,
// <infiniband/mlx5dv.h>, package libibverbs-dev) are used at build time for
// types and constants only; the binary needs only libc and libdl. On first
// use (once, thread-safe) the package opens libibverbs.so.1 and then
// libmlx5.so.1 through internal/dl (the module's one dynamic loader), and
// resolves every entry point with dlvsym at the version
// node of rdma-core's symbol maps (IBVERBS_1.1 rather than the IBVERBS_1.0
// compat entry points, mlx5dv_init_obj@MLX5_1.2 rather than MLX5_1.0) into a
// table of function pointers; small C shims call through it, including the
// header-only calls cgo cannot make (ibv_query_port, ibv_query_gid_ex).
// The libraries stay loaded for the life of the process.
//
// GDAKI_LIBIBVERBS and GDAKI_LIBMLX5 override the library names (a path or a
// soname); they are read once, at the first load. They exist for tests and
// unusual installs: libmlx5 must be the provider that the chosen libibverbs
// loads, or mlx5dv calls will see devices they do not know.
//
// Building with cgo needs rdma-core's headers (libibverbs-dev); running needs
// nothing: without the libraries the driver reports itself unavailable.
//
// What can go wrong, and what the caller sees:
//
//   - a library does not load, or lacks a required entry point: Devices and
//     Open return a *LibraryError naming the library (and symbol, with the
//     rdma-core release that introduced it) and dlerror(); it matches
//     ErrUnavailable. mlx5.Devices then lists the other drivers' devices.
//   - an optional entry point is missing (ibv_reg_dmabuf_mr, rdma-core v34;
//     mlx5dv_devx_umem_reg_ex, v35; _ibv_query_gid_ex, v32): only the call
//     that needs it fails, with ENOTSUP naming the symbol and the release.
//   - rdma-core loads but there is no RDMA device: Devices returns an empty
//     list and no error; Open fails with ENODEV, matching mlx5.ErrNoDevice,
//     and names the device asked for and those present.
//   - the binary was built with CGO_ENABLED=0: the provider is still
//     registered and reports rdma-core unavailable.
//
// # Errors
//
// Calls fail with *Error: the C call (or Go method) name, the errno (so
// errors.Is(err, syscall.EINVAL) works) and what was asked. Arguments are
// checked in Go before any C call (nil or short mailboxes, zero addresses and
// lengths, unknown access bits, remote write without local write, bad UAR
// types, negative fds). DevX commands (CreateObj, GeneralCmd, Obj.Query,
// Obj.Modify) fail with *mlx5.CmdError: opcode and op_mod from the input and,
// when the kernel answers EREMOTEIO (firmware rejected the command), the
// status and syndrome from the output mailbox, which is then valid.
// mlx5dv_open_device with the DevX flag is refused with EOPNOTSUPP or EPERM on
// devices, firmware or kernels without DevX user contexts; the error says so.
//
// # Lifetime
//
// A Device must outlive everything it made: Close fails with EBUSY, listing
// what is alive, until every PD, MR, UMEM, UAR and DevX object is released,
// and a PD refuses Dealloc while MRs are registered on it. Release objects in
// reverse order of creation: DevX objects, then UARs, UMEMs, MRs, PDs, and
// the device. Every Close, Dealloc, Dereg, Free and Destroy is idempotent;
// calls on a released object or a closed device fail with EBADF. There are no
// finalizers: whatever is not released leaks until the process exits.
//
// Memory handed to RegMR and RegUMEM is touched by the NIC for as long as the
// registration lives: it must be mmap'ed or C-allocated host memory or GPU
// memory, never the Go heap. Mailboxes are Go slices passed to C for the
// duration of one call only (the cgo pointer rules allow this; nothing
// retains them).
//
// NC UARs: libmlx5 returns one shared non-cached UAR per context for
// UARTypeNC, and freeing it is a no-op; UARTypeNCDedicated asks for a private
// one and needs rdma-core v45 or newer (older libmlx5 refuses it with
// EOPNOTSUPP, which the error explains).
//
// # Threading
//
// A Device and its objects are safe for concurrent use. A device's context
// cannot be closed under a call in flight; an object's release waits for its
// own calls in flight to end.
//
// # What needs a real mlx5 device
//
// The unit tests run anywhere rdma-core is installed, with or without a NIC.
// Against the real libraries they cover loading, the missing-library and
// missing-symbol errors, empty enumeration, opening an absent device and the
// header constants that package mlx5 retypes. With the C test doubles of
// package fakeverbs swapped into the function table they cover every shim
// and wrapper: argument marshalling (the DevX flag, the dma-buf UMEM
// structure, MR and UAR arguments, mailbox lengths), result conversion
// (device, port and GID attributes, node GUID byte order, object numbers),
// errno and CmdError mapping (kernel and firmware rejections), the DevX
// refusal hints, close ordering and idempotent release. Argument validation
// and error formatting are plain Go and tested in both builds.
//
// What only a ConnectX device with DevX exercises (TestHardwareBringUp,
// skipped with "no mlx5 device" elsewhere) is rdma-core and the kernel
// themselves: that mlx5dv_open_device grants DevX, the real attribute values,
// QUERY_HCA_CAP through GeneralCmd and a firmware status and syndrome on
// EREMOTEIO, the pdn of a real PD, UMEM registration of mmap'ed memory, the
// three UAR types (NC_DEDICATED on rdma-core v45 and newer), QueryEQN, and a
// DevX object (ALLOC_PD) created and destroyed. The DevX event channel
// (CreateEventChannel: mlx5dv_devx_create_event_channel, subscribe_devx_event
// and get_event, rdma-core v26 and newer) is tested against the fakes only:
// that the kernel delivers a CQ's COMP events and the QP, CQ and SRQ events
// to a DevX object's subscription, the unaffiliated PORT_CHANGE to a
// subscription without an object, and reports a failed device as EIO on
// the read (reported once as INTERNAL_ERROR) needs a ConnectX. Dma-buf registration
// (RegDmabufMR, RegDmabufUMEM) on hardware additionally needs GPU memory
// exported as a dma-buf, which the CUDA layer provides; no test here
// reaches it.
package devx
