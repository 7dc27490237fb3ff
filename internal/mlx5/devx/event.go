//go:build cgo

package devx

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// eventChannel is a DevX event channel (mlx5dv_devx_create_event_channel
// without OMIT_EV_DATA: every event carries its whole EQE). Its fd is put
// in nonblocking mode, so GetEvent never blocks and a Go program can wait
// for it with the runtime's poller.
type eventChannel struct {
	dev *device

	mu     sync.RWMutex // read-held by Subscribe/GetEvent, write-held by Close
	ch     *C.struct_mlx5dv_devx_event_channel
	fd     int
	closed bool
	fatal  bool // the device failed: one INTERNAL_ERROR was reported
}

var _ mlx5.EventChannel = (*eventChannel)(nil)

// CreateEventChannel calls mlx5dv_devx_create_event_channel (rdma-core v26
// and newer; ENOTSUP before).
func (d *device) CreateEventChannel() (mlx5.EventChannel, error) {
	const op = "mlx5dv_devx_create_event_channel"
	if err := d.enter(op); err != nil {
		return nil, err
	}
	defer d.mu.RUnlock()
	if C.gdk_has(C.GDK_MLX5DV_DEVX_CREATE_EVENT_CHANNEL) == 0 {
		return nil, newError(op, syscall.ENOTSUP, "libmlx5 lacks the DevX event channel (rdma-core v26 and newer have it)")
	}
	ch, errno := C.gdk_create_event_channel(d.ctx)
	if ch == nil {
		return nil, newError(op, errnoOf(errno), "device %s", d.name)
	}
	runtime.KeepAlive(d)
	fd := int(C.gdk_event_channel_fd(ch))
	if err := syscall.SetNonblock(fd, true); err != nil {
		C.gdk_destroy_event_channel(ch)
		return nil, newError(op, errnoOf(err), "device %s: set the channel's fd %d nonblocking", d.name, fd)
	}
	d.hold("event channel")
	return &eventChannel{dev: d, ch: ch, fd: fd}, nil
}

func (c *eventChannel) FD() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return -1
	}
	return c.fd
}

// Subscribe calls mlx5dv_devx_subscribe_devx_event.
func (c *eventChannel) Subscribe(o mlx5.Obj, types []mlx5.EventType, cookie uint64) error {
	const op = "mlx5dv_devx_subscribe_devx_event"
	if len(types) == 0 {
		return newError(op, syscall.EINVAL, "no event types")
	}
	var dobj *obj
	if o != nil {
		var ok bool
		if dobj, ok = o.(*obj); !ok || dobj.dev != c.dev {
			return newError(op, syscall.EINVAL, "object %v is not a DevX object of device %s", o, c.dev.name)
		}
		dobj.mu.RLock()
		defer dobj.mu.RUnlock()
		if dobj.destroyed {
			return newError(op, syscall.EINVAL, "object 0x%x is destroyed", dobj.id)
		}
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return newError(op, syscall.EBADF, "event channel is closed")
	}
	nums := (*C.uint16_t)(C.malloc(C.size_t(2 * len(types))))
	defer C.free(unsafe.Pointer(nums))
	arr := unsafe.Slice(nums, len(types))
	for i, t := range types {
		arr[i] = C.uint16_t(t)
	}
	var cobj *C.struct_mlx5dv_devx_obj
	if dobj != nil {
		cobj = dobj.o
	}
	// events_sz is the size of the array in bytes.
	if rc := C.gdk_subscribe_devx_event(c.ch, cobj, C.uint16_t(2*len(types)), nums, C.uint64_t(cookie)); rc != 0 {
		return newError(op, syscall.Errno(rc), "events %v on %s", types, c.dev.name)
	}
	runtime.KeepAlive(dobj)
	return nil
}

// GetEvent calls mlx5dv_devx_get_event on the nonblocking fd. A device
// that failed makes the kernel fail the read (EIO, or ENODEV once the
// device is gone): the first such read is reported as an INTERNAL_ERROR
// event with cookie 0, the next ones as their errno.
func (c *eventChannel) GetEvent() (mlx5.ChannelEvent, error) {
	const op = "mlx5dv_devx_get_event"
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return mlx5.ChannelEvent{}, newError(op, syscall.EBADF, "event channel is closed")
	}
	var cookie C.uint64_t
	var b [mlx5.EQESize]byte
	n, errno := C.gdk_get_event(c.ch, &cookie, unsafe.Pointer(&b[0]), C.size_t(len(b)))
	if n < 0 {
		e := errnoOf(errno)
		if e == syscall.EAGAIN {
			return mlx5.ChannelEvent{}, syscall.EAGAIN
		}
		if (e == syscall.EIO || e == syscall.ENODEV) && !c.fatal {
			c.fatal = true
			return mlx5.ChannelEvent{EQE: mlx5.InternalErrorEQE()}, nil
		}
		return mlx5.ChannelEvent{}, newError(op, e, "device %s", c.dev.name)
	}
	eqe, err := mlx5.DecodeEQE(b[:])
	if err != nil {
		return mlx5.ChannelEvent{}, errors.Join(newError(op, syscall.EIO, "event of %d bytes", n), err)
	}
	return mlx5.ChannelEvent{Cookie: uint64(cookie), EQE: eqe}, nil
}

// Close calls mlx5dv_devx_destroy_event_channel.
func (c *eventChannel) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	C.gdk_destroy_event_channel(c.ch)
	c.ch, c.fd, c.closed = nil, -1, true
	c.dev.release("event channel")
	return nil
}
