//go:build cgo

package devx

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// obj is a DevX object made by a PRM create command.
type obj struct {
	dev    *device
	id     uint32
	opcode mlx5.Opcode // the create command, for messages

	mu        sync.RWMutex // read-held by Query/Modify, write-held by Destroy
	o         *C.struct_mlx5dv_devx_obj
	destroyed bool
}

// CreateObj calls mlx5dv_devx_obj_create. The object's number is read from
// the output at bit 0x48 (cqn, qpn, rmpn, srqn, pd). A command firmware
// rejected fails with a *mlx5.CmdError, and out holds its status.
func (d *device) CreateObj(in, out []byte) (mlx5.Obj, error) {
	const op = "mlx5dv_devx_obj_create"
	if err := checkMailbox(op, in, out, createOutMin); err != nil {
		return nil, err
	}
	if err := d.enter(op); err != nil {
		return nil, err
	}
	defer d.mu.RUnlock()
	o, errno := C.gdk_obj_create(d.ctx, unsafe.Pointer(&in[0]), C.size_t(len(in)),
		unsafe.Pointer(&out[0]), C.size_t(len(out)))
	if o == nil {
		return nil, mlx5.NewCmdError(op, in, out, errnoOf(errno))
	}
	runtime.KeepAlive(d)
	if err := cmdResult(op, in, out, 0); err != nil {
		// The kernel made an object although firmware reported a failure;
		// do not leak it.
		C.gdk_obj_destroy(o)
		return nil, err
	}
	d.hold("DevX object")
	return &obj{dev: d, o: o, id: objID(out), opcode: mlx5.Opcode(mlx5.Get(in, mlx5.F(0, 16)))}, nil
}

var _ mlx5.Obj = (*obj)(nil)

func (o *obj) ID() uint32 { return o.id }

// Query calls mlx5dv_devx_obj_query.
func (o *obj) Query(in, out []byte) error {
	return o.cmd("mlx5dv_devx_obj_query", in, out, func(in, out unsafe.Pointer, inlen, outlen C.size_t) C.int {
		return C.gdk_obj_query(o.o, in, inlen, out, outlen)
	})
}

// Modify calls mlx5dv_devx_obj_modify.
func (o *obj) Modify(in, out []byte) error {
	return o.cmd("mlx5dv_devx_obj_modify", in, out, func(in, out unsafe.Pointer, inlen, outlen C.size_t) C.int {
		return C.gdk_obj_modify(o.o, in, inlen, out, outlen)
	})
}

// cmd runs one command on the object, holding it against Destroy.
func (o *obj) cmd(op string, in, out []byte, call func(in, out unsafe.Pointer, inlen, outlen C.size_t) C.int) error {
	if err := checkMailbox(op, in, out, mailboxHeader); err != nil {
		return err
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	if o.destroyed {
		return newError(op, syscall.EBADF, "%s object 0x%x on %s is destroyed", mlx5.OpcodeName(o.opcode), o.id, o.dev.name)
	}
	rc := call(unsafe.Pointer(&in[0]), unsafe.Pointer(&out[0]), C.size_t(len(in)), C.size_t(len(out)))
	runtime.KeepAlive(o)
	return cmdResult(op, in, out, int(rc))
}

// Destroy calls mlx5dv_devx_obj_destroy (the kernel runs the matching
// DESTROY command); a second call is a no-op.
func (o *obj) Destroy() error {
	const op = "mlx5dv_devx_obj_destroy"
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.destroyed {
		return nil
	}
	if rc := C.gdk_obj_destroy(o.o); rc != 0 {
		return newError(op, syscall.Errno(rc), "object 0x%x made by %s on %s", o.id, mlx5.OpcodeName(o.opcode), o.dev.name)
	}
	runtime.KeepAlive(o)
	o.o = nil
	o.destroyed = true
	o.dev.release("DevX object")
	return nil
}
