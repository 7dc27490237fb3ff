package mlx5

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"unsafe"
)

// This file is the driver boundary: everything the verbs layer needs from an
// mlx5 device, and nothing more. It is as thin as rdma-core's own DevX
// surface. Two drivers implement it: devx (real hardware through libibverbs
// and libmlx5) and emu (the software ConnectX). Both receive the very same PRM
// command bytes, built by the builders of this package.
//
// Addresses. Every address that crosses the boundary (MR and UMEM ranges,
// doorbell registers) is a virtual address in this process: host memory, or a
// GPU virtual address for GPU memory. Keys, PD numbers, UMEM ids and UAR page
// ids are host-endian numbers, as rdma-core returns them.

// Access is the set of IBV_ACCESS_* rights of a memory registration. The
// values are libibverbs' enum ibv_access_flags.
type Access uint32

const (
	AccessLocalWrite      Access = 1 << 0  // IBV_ACCESS_LOCAL_WRITE
	AccessRemoteWrite     Access = 1 << 1  // IBV_ACCESS_REMOTE_WRITE
	AccessRemoteRead      Access = 1 << 2  // IBV_ACCESS_REMOTE_READ
	AccessRemoteAtomic    Access = 1 << 3  // IBV_ACCESS_REMOTE_ATOMIC
	AccessMWBind          Access = 1 << 4  // IBV_ACCESS_MW_BIND
	AccessZeroBased       Access = 1 << 5  // IBV_ACCESS_ZERO_BASED
	AccessOnDemand        Access = 1 << 6  // IBV_ACCESS_ON_DEMAND
	AccessHugeTLB         Access = 1 << 7  // IBV_ACCESS_HUGETLB
	AccessRelaxedOrdering Access = 1 << 20 // IBV_ACCESS_RELAXED_ORDERING (optional range)
	accessOptionalFirst          = 1 << 20
	accessOptionalRange   Access = 0x3ff << 20 // bits 20..29 may be dropped by old kernels
)

// UAR page offsets.
const (
	UARPageSize       = 4096
	UAROffsetCQArm    = 0x020 // MLX5_CQ_DOORBELL: 64-bit {arm word, cqn}
	UAROffsetNoDBR    = 0x600 // doorbell of QPs with send_dbr_mode = NO_DBR_EXT
	UAROffsetBF       = 0x800 // first bfreg (reg_addr of a DevX UAR)
	UARBFHalf         = 0x100 // BlueFlame buffer half (bf_reg_size / 2)
	UAROffsetSecondBF = 0xa00 // second bfreg (static UARs only)
)

// GID is a 16-byte global identifier in network order.
type GID [16]byte

// DeviceAttr is what ibv_query_device reports (the fields the library uses).
type DeviceAttr struct {
	FWVersion       string
	NodeGUID        uint64
	VendorID        uint32
	VendorPartID    uint32
	MaxMRSize       uint64
	MaxQP           uint32
	MaxQPWR         uint32
	MaxSGE          uint32
	MaxCQ           uint32
	MaxCQE          uint32
	MaxMR           uint32
	MaxPD           uint32
	MaxAH           uint32
	MaxSRQ          uint32
	MaxSRQWR        uint32
	MaxSRQSGE       uint32
	MaxPKeys        uint16
	MaxQPRDAtom     uint32
	MaxQPInitRDAtom uint32
	AtomicCap       uint32 // IBV_ATOMIC_NONE 0, HCA 1, GLOB 2
	PhysPortCnt     uint8
}

// PortAttr is what ibv_query_port reports (the fields the library uses).
type PortAttr struct {
	State       PortState
	MaxMTU      uint8 // enum ibv_mtu: 1 = 256 ... 5 = 4096
	ActiveMTU   uint8
	GIDTblLen   uint32
	LID         uint16
	SMLID       uint16
	LinkLayer   LinkLayer
	ActiveSpeed uint32
	ActiveWidth uint8
}

// GIDEntry is one row of a port's GID table (ibv_gid_entry).
type GIDEntry struct {
	GID         GID
	Index       uint32
	Port        uint32
	Type        GIDType
	NetdevIndex uint32
}

// DeviceInfo describes a device in the list, before it is opened.
type DeviceInfo struct {
	Name     string // "mlx5_0", "emu0"
	Driver   string // "devx" or "emu"
	NodeGUID uint64
	// Sysfs is the device's directory under /sys/class/infiniband, empty for
	// emulated devices.
	Sysfs string
}

// Provider enumerates and opens the devices of one driver.
type Provider interface {
	// Name is the driver's name ("devx", "emu").
	Name() string
	// Devices lists the devices this driver can open. A driver whose native
	// libraries are missing returns an empty list and the reason.
	Devices() ([]DeviceInfo, error)
	// Open opens one device by its exact name.
	Open(name string) (Device, error)
}

// Device is an opened mlx5 device with a DevX context.
//
// Methods are safe for concurrent use. Objects returned by a Device must be
// released before the device is closed; Close fails with EBUSY otherwise.
type Device interface {
	Name() string
	// Driver is the name of the provider that opened the device.
	Driver() string
	QueryDevice() (DeviceAttr, error)
	QueryPort(port uint8) (PortAttr, error)
	QueryGID(port uint8, index uint32) (GIDEntry, error)

	// AllocPD allocates a protection domain (ibv_alloc_pd + mlx5dv_init_obj).
	AllocPD() (PD, error)
	// RegMR registers [addr, addr+length) with iova as the address that
	// WQEs use (ibv_reg_mr_iova2).
	RegMR(pd PD, addr uintptr, length uint64, iova uint64, access Access) (MR, error)
	// RegDmabufMR registers [offset, offset+length) of a dma-buf
	// (ibv_reg_dmabuf_mr). addr is the virtual address of the first byte of
	// the range in this process (a GPU VA), which the emulator reads through;
	// hardware ignores it.
	RegDmabufMR(pd PD, fd int, offset uint64, length uint64, iova uint64, addr uintptr, access Access) (MR, error)

	// RegUMEM registers [addr, addr+size) as a DevX UMEM (mlx5dv_devx_umem_reg).
	RegUMEM(addr uintptr, size uint64, access Access) (UMEM, error)
	// RegDmabufUMEM registers a dma-buf range as a UMEM
	// (mlx5dv_devx_umem_reg_ex with MLX5DV_UMEM_MASK_DMABUF). addr is the
	// virtual address of the range, as for RegDmabufMR.
	RegDmabufUMEM(fd int, offset uint64, size uint64, addr uintptr, access Access, pageSizes uint64) (UMEM, error)

	// AllocUAR allocates a UAR page (mlx5dv_devx_alloc_uar).
	AllocUAR(t UARType) (UAR, error)

	// CreateObj executes a PRM create command (mlx5dv_devx_obj_create). out
	// is filled even when the command fails in firmware; the error is then a
	// *CmdError carrying the status and syndrome.
	CreateObj(in, out []byte) (Obj, error)
	// GeneralCmd executes an object-less PRM command
	// (mlx5dv_devx_general_cmd): QUERY_HCA_CAP, QUERY_ROCE_ADDRESS, ...
	GeneralCmd(in, out []byte) error
	// QueryEQN maps a completion vector to an EQ number (mlx5dv_devx_query_eqn).
	QueryEQN(vector uint32) (uint32, error)

	// CreateEventChannel opens a DevX event channel
	// (mlx5dv_devx_create_event_channel): a nonblocking file descriptor,
	// readable while an event the channel subscribed to is pending.
	CreateEventChannel() (EventChannel, error)

	Close() error
}

// EventChannel is a DevX event channel: the events of the objects it
// subscribed to, each one a whole EQE with the subscription's cookie. It
// must be closed before its device; destroying an object ends its
// subscriptions.
//
// Methods are safe for concurrent use.
type EventChannel interface {
	// FD is the channel's file descriptor: nonblocking, readable while an
	// event is pending. It stays owned by the channel.
	FD() int
	// Subscribe delivers the events of the given types on obj, with cookie
	// (mlx5dv_devx_subscribe_devx_event). A nil obj subscribes to the
	// device's unaffiliated events (PORT_CHANGE, INTERNAL_ERROR). A type
	// that obj cannot raise is EINVAL.
	Subscribe(obj Obj, types []EventType, cookie uint64) error
	// GetEvent takes the next pending event without blocking
	// (mlx5dv_devx_get_event): syscall.EAGAIN when none is pending.
	GetEvent() (ChannelEvent, error)
	// Close closes the channel (mlx5dv_devx_destroy_event_channel); the
	// events still pending are dropped. A second Close returns nil.
	Close() error
}

// ChannelEvent is one event read from an EventChannel.
type ChannelEvent struct {
	Cookie uint64 // the subscription's cookie
	EQE    EQE    // the event queue entry firmware wrote
}

// RDMACore is implemented by the devices of the rdma-core driver (devx), for
// programs that mix in their own libibverbs calls; emulated devices do not
// implement it.
type RDMACore interface {
	// IBVContext is the device's struct ibv_context pointer.
	IBVContext() unsafe.Pointer
	// CmdFD is the context's command file descriptor (ibv_context.cmd_fd),
	// the handle ibv_import_device takes, in this process or, passed over
	// a Unix socket, in another.
	CmdFD() int
	// BorrowPD wraps a struct ibv_pd of this context that the caller
	// allocated: the PD gets its PD number, and Dealloc leaves it
	// allocated (its owner deallocates it).
	BorrowPD(ibvPD unsafe.Pointer) (PD, error)
	// ImportPD imports the PD with this kernel handle (ibv_import_pd) into
	// this context; Dealloc unimports it (ibv_unimport_pd).
	ImportPD(handle uint32) (PD, error)
}

// RDMACorePD is implemented by the PDs of the rdma-core driver.
type RDMACorePD interface {
	// Handle is the PD's kernel object handle (ibv_pd.handle), what
	// ibv_import_pd takes.
	Handle() uint32
	// IBVPD is the struct ibv_pd pointer.
	IBVPD() unsafe.Pointer
}

// PD is a protection domain.
type PD interface {
	// PDN is the 24-bit PRM PD number for qpc.pd.
	PDN() uint32
	// Native returns the ibv_pd pointer for users who mix in their own
	// libibverbs code, or 0 on an emulated device.
	Native() uintptr
	Dealloc() error
}

// MR is a registered memory region.
type MR interface {
	LKey() uint32
	RKey() uint32
	Addr() uintptr
	IOVA() uint64
	Len() uint64
	Native() uintptr // ibv_mr pointer, 0 on an emulated device
	Dereg() error
}

// UMEM is a DevX user memory registration.
type UMEM interface {
	ID() uint32
	Addr() uintptr
	Size() uint64
	Dereg() error
}

// UAR is a user access region: one 4 KiB doorbell page.
type UAR interface {
	// PageID is the UAR index for cqc.uar_page / qpc.uar_page.
	PageID() uint32
	// BaseAddr is the CPU mapping of the whole page.
	BaseAddr() uintptr
	// RegAddr is the doorbell / BlueFlame register: BaseAddr()+0x800.
	RegAddr() uintptr
	// MmapOffset is the offset that maps the page from the device fd.
	MmapOffset() int64
	Type() UARType
	// IOMemory reports whether the page is device MMIO (a NIC BAR page, to
	// be host-registered for the GPU with the I/O-memory flag) rather than
	// ordinary host memory (an emulated device's page).
	IOMemory() bool
	Free() error
}

// Obj is a DevX object made by CreateObj (a CQ, QP or RMP).
type Obj interface {
	// ID is the object number from the create output (cqn, qpn, rmpn).
	ID() uint32
	Query(in, out []byte) error
	Modify(in, out []byte) error
	// Destroy executes the matching destroy command.
	Destroy() error
}

var (
	regMu     sync.Mutex
	providers = map[string]Provider{}
)

// RegisterProvider makes a driver's devices visible to Devices and Open. The
// drivers call it from init.
func RegisterProvider(p Provider) {
	regMu.Lock()
	defer regMu.Unlock()
	providers[p.Name()] = p
}

func registered() []Provider {
	regMu.Lock()
	defer regMu.Unlock()
	ps := make([]Provider, 0, len(providers))
	for _, p := range providers {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Name() < ps[j].Name() })
	return ps
}

// Devices lists the devices of every registered driver, real ones first.
// A driver that cannot enumerate (rdma-core missing) contributes no devices;
// its reason is returned in the joined error only when no device at all was
// found.
func Devices() ([]DeviceInfo, error) {
	var all []DeviceInfo
	var errs []error
	for _, p := range registered() {
		ds, err := p.Devices()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.Name(), err))
		}
		all = append(all, ds...)
	}
	sort.SliceStable(all, func(i, j int) bool {
		if (all[i].Driver == "emu") != (all[j].Driver == "emu") {
			return all[j].Driver == "emu"
		}
		return all[i].Name < all[j].Name
	})
	if len(all) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return all, nil
}

// ErrNoDevice is matched (errors.Is) by the error Open returns for a name no
// driver knows.
var ErrNoDevice = errors.New("no such RDMA device")

// Open opens a device by exact name, asking the driver that lists it.
func Open(name string) (Device, error) {
	var errs []error
	var names []string
	for _, p := range registered() {
		ds, err := p.Devices()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.Name(), err))
			continue
		}
		for _, d := range ds {
			if d.Name == name {
				return p.Open(name)
			}
			names = append(names, d.Name)
		}
	}
	err := fmt.Errorf("open device %q: %w (devices present: %v)", name, ErrNoDevice, names)
	if len(errs) > 0 {
		err = fmt.Errorf("%w; %w", err, errors.Join(errs...))
	}
	return nil, err
}
