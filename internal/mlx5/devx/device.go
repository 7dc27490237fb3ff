//go:build cgo

package devx

/*
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// openDevices counts devices opened and not yet closed (for leak checks).
var openDevices atomic.Int64

// device is an ibv_context opened with DevX.
type device struct {
	name string

	// mu is read-held by every call that uses ctx and write-held by Close,
	// so the context cannot be closed under a call.
	mu     sync.RWMutex
	ctx    *C.struct_ibv_context
	closed bool
	// borrowed marks a context the caller opened (ImportIBVContext): Close
	// leaves it open.
	borrowed bool

	liveMu sync.Mutex
	live   map[string]int // objects made by this device and not yet released
}

func newDevice(name string, ctx *C.struct_ibv_context) *device {
	openDevices.Add(1)
	return &device{name: name, ctx: ctx, live: map[string]int{}}
}

// enter read-locks the device for a call on its context. On success the
// caller must call d.mu.RUnlock.
func (d *device) enter(op string) error {
	d.mu.RLock()
	if d.closed {
		d.mu.RUnlock()
		return newError(op, syscall.EBADF, "device %s is closed", d.name)
	}
	return nil
}

// enterChecked returns the first failed check of a call's arguments (in
// the order given: the caller's validation, then the entry points it needs)
// and otherwise enters the device as enter does.
func (d *device) enterChecked(op string, checks ...error) error {
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return d.enter(op)
}

func (d *device) hold(kind string) {
	d.liveMu.Lock()
	d.live[kind]++
	d.liveMu.Unlock()
}

func (d *device) release(kind string) {
	d.liveMu.Lock()
	d.live[kind]--
	d.liveMu.Unlock()
}

var _ mlx5.Device = (*device)(nil)

func (d *device) Name() string   { return d.name }
func (d *device) Driver() string { return Name }

// Close closes the context (ibv_close_device). It fails with EBUSY while
// objects the device made are alive; closing a closed device is a no-op.
func (d *device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.liveMu.Lock()
	busy := 0
	for _, n := range d.live {
		busy += n
	}
	var detail string
	if busy > 0 {
		detail = busyDetail(d.name, d.live)
	}
	d.liveMu.Unlock()
	if busy > 0 {
		return &Error{Op: "Close", Errno: syscall.EBUSY, Detail: detail}
	}
	if d.borrowed {
		// The caller's context: it closes it.
	} else if rc := C.gdk_close_device(d.ctx); rc != 0 {
		return newError("ibv_close_device", syscall.Errno(rc), "device %s", d.name)
	}
	d.ctx = nil
	d.closed = true
	openDevices.Add(-1)
	return nil
}

// QueryDevice calls ibv_query_device.
func (d *device) QueryDevice() (mlx5.DeviceAttr, error) {
	const op = "ibv_query_device"
	if err := d.enter(op); err != nil {
		return mlx5.DeviceAttr{}, err
	}
	defer d.mu.RUnlock()
	var a C.struct_ibv_device_attr
	if rc := C.gdk_query_device(d.ctx, &a); rc != 0 {
		return mlx5.DeviceAttr{}, newError(op, syscall.Errno(rc), "device %s", d.name)
	}
	runtime.KeepAlive(d)
	fw := C.GoBytes(unsafe.Pointer(&a.fw_ver[0]), C.int(len(a.fw_ver)))
	guid := (*[8]byte)(unsafe.Pointer(&a.node_guid))
	return mlx5.DeviceAttr{
		FWVersion:       cString(fw),
		NodeGUID:        binary.BigEndian.Uint64(guid[:]),
		VendorID:        uint32(a.vendor_id),
		VendorPartID:    uint32(a.vendor_part_id),
		MaxMRSize:       uint64(a.max_mr_size),
		MaxQP:           uint32(a.max_qp),
		MaxQPWR:         uint32(a.max_qp_wr),
		MaxSGE:          uint32(a.max_sge),
		MaxCQ:           uint32(a.max_cq),
		MaxCQE:          uint32(a.max_cqe),
		MaxMR:           uint32(a.max_mr),
		MaxPD:           uint32(a.max_pd),
		MaxAH:           uint32(a.max_ah),
		MaxSRQ:          uint32(a.max_srq),
		MaxSRQWR:        uint32(a.max_srq_wr),
		MaxSRQSGE:       uint32(a.max_srq_sge),
		MaxPKeys:        uint16(a.max_pkeys),
		MaxQPRDAtom:     uint32(a.max_qp_rd_atom),
		MaxQPInitRDAtom: uint32(a.max_qp_init_rd_atom),
		AtomicCap:       uint32(a.atomic_cap),
		PhysPortCnt:     uint8(a.phys_port_cnt),
	}, nil
}

// QueryPort calls ibv_query_port (the header macro's logic, in a C shim).
func (d *device) QueryPort(port uint8) (mlx5.PortAttr, error) {
	const op = "ibv_query_port"
	if port == 0 {
		return mlx5.PortAttr{}, newError(op, syscall.EINVAL, "port numbers start at 1")
	}
	if err := d.enter(op); err != nil {
		return mlx5.PortAttr{}, err
	}
	defer d.mu.RUnlock()
	var a C.struct_ibv_port_attr
	if rc := C.gdk_query_port(d.ctx, C.uint8_t(port), &a); rc != 0 {
		return mlx5.PortAttr{}, newError(op, syscall.Errno(rc), "device %s port %d", d.name, port)
	}
	runtime.KeepAlive(d)
	return mlx5.PortAttr{
		State:       mlx5.PortState(a.state),
		MaxMTU:      uint8(a.max_mtu),
		ActiveMTU:   uint8(a.active_mtu),
		GIDTblLen:   uint32(a.gid_tbl_len),
		LID:         uint16(a.lid),
		SMLID:       uint16(a.sm_lid),
		LinkLayer:   mlx5.LinkLayer(a.link_layer),
		ActiveSpeed: uint32(a.active_speed),
		ActiveWidth: uint8(a.active_width),
	}, nil
}

// QueryGID calls ibv_query_gid_ex. An empty table slot fails with ENODATA.
func (d *device) QueryGID(port uint8, index uint32) (mlx5.GIDEntry, error) {
	const op = "ibv_query_gid_ex"
	if port == 0 {
		return mlx5.GIDEntry{}, newError(op, syscall.EINVAL, "port numbers start at 1")
	}
	if err := d.enterChecked(op, need(op, symQueryGIDEx)); err != nil {
		return mlx5.GIDEntry{}, err
	}
	defer d.mu.RUnlock()
	var e C.struct_ibv_gid_entry
	if rc := C.gdk_query_gid_ex(d.ctx, C.uint32_t(port), C.uint32_t(index), &e); rc != 0 {
		return mlx5.GIDEntry{}, newError(op, syscall.Errno(rc), "device %s port %d GID index %d", d.name, port, index)
	}
	runtime.KeepAlive(d)
	var g mlx5.GID
	copy(g[:], C.GoBytes(unsafe.Pointer(&e.gid), C.int(len(g))))
	return mlx5.GIDEntry{
		GID:         g,
		Index:       uint32(e.gid_index),
		Port:        uint32(e.port_num),
		Type:        mlx5.GIDType(e.gid_type),
		NetdevIndex: uint32(e.ndev_ifindex),
	}, nil
}

// GeneralCmd calls mlx5dv_devx_general_cmd. A command firmware rejected
// fails with a *mlx5.CmdError carrying status and syndrome.
func (d *device) GeneralCmd(in, out []byte) error {
	const op = "mlx5dv_devx_general_cmd"
	if err := checkMailbox(op, in, out, mailboxHeader); err != nil {
		return err
	}
	if err := d.enter(op); err != nil {
		return err
	}
	defer d.mu.RUnlock()
	rc := C.gdk_general_cmd(d.ctx, unsafe.Pointer(&in[0]), C.size_t(len(in)),
		unsafe.Pointer(&out[0]), C.size_t(len(out)))
	runtime.KeepAlive(d)
	return cmdResult(op, in, out, int(rc))
}

// QueryEQN calls mlx5dv_devx_query_eqn.
func (d *device) QueryEQN(vector uint32) (uint32, error) {
	const op = "mlx5dv_devx_query_eqn"
	if err := d.enter(op); err != nil {
		return 0, err
	}
	defer d.mu.RUnlock()
	var eqn C.uint32_t
	if rc := C.gdk_query_eqn(d.ctx, C.uint32_t(vector), &eqn); rc != 0 {
		return 0, newError(op, syscall.Errno(rc), "device %s completion vector %d", d.name, vector)
	}
	runtime.KeepAlive(d)
	return uint32(eqn), nil
}
