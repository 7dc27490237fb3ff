package devx

import (
	"bytes"
	"fmt"
	"math"
	"syscall"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Argument checks done in Go before any C call, so that a bad argument is a
// clear EINVAL naming the argument instead of whatever the kernel makes of it.
// They need no library and no device, and are unit-tested in both builds.

const (
	// mailboxHeader is the size of the PRM input and output headers.
	mailboxHeader = mlx5.CmdHeaderLen
	// maxMailbox bounds a mailbox. The largest PRM mailboxes this project
	// builds are a few KiB (QUERY_HCA_CAP output: 4112 bytes); 1 MiB leaves
	// room for commands with page lists while catching a length mixed up
	// with an address.
	maxMailbox = 1 << 20
)

var (
	// vhcaTunnelID is the input header field the kernel requires to be 0.
	vhcaTunnelID = mlx5.CmdHeaderFields.VHCATunnelID
	// objIDField is where CREATE_CQ, CREATE_QP, CREATE_RMP, CREATE_SRQ and
	// ALLOC_PD put the new object's number in their output.
	objIDField = mlx5.ObjIDField
)

// checkMailbox validates a PRM command's mailboxes. minOut is the smallest
// output the caller needs to read (the header, or the object id of a create).
func checkMailbox(op string, in, out []byte, minOut int) error {
	if err := checkMailboxLen(op, "input", len(in), mailboxHeader, fmt.Sprintf("the %d-byte command header", mailboxHeader)); err != nil {
		return err
	}
	if err := checkMailboxLen(op, "output", len(out), minOut, fmt.Sprintf("%d bytes", minOut)); err != nil {
		return err
	}
	if v := mlx5.Get(in, vhcaTunnelID); v != 0 {
		return newError(op, syscall.EINVAL, "%s: vhca_tunnel_id is 0x%x, but the kernel refuses cross-function commands (it must be 0)",
			mlx5.OpcodeName(mlx5.Opcode(mlx5.Get(in, mlx5.CmdHeaderFields.Opcode))), v)
	}
	return nil
}

// checkMailboxLen applies the length rules to one mailbox (which: "input"
// or "output") of n bytes that must hold at least minLen bytes (least says what
// they are).
func checkMailboxLen(op, which string, n, minLen int, least string) error {
	switch {
	case n < minLen:
		return newError(op, syscall.EINVAL, "%s mailbox of %d bytes is shorter than %s", which, n, least)
	case n%4 != 0:
		return newError(op, syscall.EINVAL, "%s mailbox of %d bytes is not a whole number of 32-bit dwords", which, n)
	case n > maxMailbox:
		return newError(op, syscall.EINVAL, "%s mailbox of %d bytes exceeds %d bytes", which, n, maxMailbox)
	}
	return nil
}

// createOutMin is the smallest output of a create command: through the
// object id.
var createOutMin = objIDField.End()

// objID reads the new object's number from a create command's output. Short
// outputs read as 0 (checkMailbox refuses them before the call).
func objID(out []byte) uint32 {
	if len(out) < createOutMin {
		return 0
	}
	return mlx5.Get32(out, objIDField)
}

// checkRange validates a virtual address range [addr, addr+length).
func checkRange(op, what string, addr uintptr, length uint64) error {
	switch {
	case addr == 0:
		return newError(op, syscall.EINVAL, "%s address is 0", what)
	case length == 0:
		return newError(op, syscall.EINVAL, "%s length is 0", what)
	case uint64(addr)+length < uint64(addr):
		return newError(op, syscall.EINVAL, "%s range 0x%x+0x%x wraps the address space", what, addr, length)
	case length > math.MaxInt64:
		return newError(op, syscall.EINVAL, "%s length 0x%x is too large", what, length)
	}
	return nil
}

// checkDmabuf validates a dma-buf range: an open fd and a non-empty range.
func checkDmabuf(op string, fd int, offset, length uint64) error {
	switch {
	case fd < 0:
		return newError(op, syscall.EBADF, "dma-buf fd %d is not an open file descriptor", fd)
	case fd > math.MaxInt32:
		return newError(op, syscall.EBADF, "dma-buf fd %d is out of range", fd)
	case length == 0:
		return newError(op, syscall.EINVAL, "dma-buf range length is 0")
	case offset+length < offset:
		return newError(op, syscall.EINVAL, "dma-buf range 0x%x+0x%x overflows", offset, length)
	case length > math.MaxInt64:
		return newError(op, syscall.EINVAL, "dma-buf range length 0x%x is too large", length)
	}
	return nil
}

// accessKnown is every IBV_ACCESS_* bit libibverbs defines: LOCAL_WRITE
// through FLUSH_PERSISTENT (bits 0..9) and the optional range (bits 20..29).
const accessKnown = mlx5.Access(0x3ff) | mlx5.AccessRelaxedOrdering*0x3ff

// checkAccess validates a set of access rights for a memory registration.
func checkAccess(op string, a mlx5.Access) error {
	if bad := a &^ accessKnown; bad != 0 {
		return newError(op, syscall.EINVAL, "access 0x%x has bits 0x%x that are no IBV_ACCESS_* flag", uint32(a), uint32(bad))
	}
	if a&(mlx5.AccessRemoteWrite|mlx5.AccessRemoteAtomic) != 0 && a&mlx5.AccessLocalWrite == 0 {
		return newError(op, syscall.EINVAL, "access 0x%x asks for remote write or atomic without local write, which the kernel refuses", uint32(a))
	}
	return nil
}

// checkUARType validates a UAR allocation type.
func checkUARType(op string, t mlx5.UARType) error {
	switch t {
	case mlx5.UARTypeBF, mlx5.UARTypeNC, mlx5.UARTypeNCDedicated:
		return nil
	}
	return newError(op, syscall.EINVAL, "UAR type %v is none of BF, NC, NC_DEDICATED", t)
}

// pageSizeMask returns the page-size bitmap for a dma-buf UMEM: the caller's,
// or the system page size when it passes 0. A bitmap is a set of powers of
// two (bit n: 2^n bytes); sizes under 4 KiB do not exist on mlx5.
func pageSizeMask(op string, pageSizes uint64, sysPage int) (uint64, error) {
	if pageSizes == 0 {
		return uint64(sysPage), nil
	}
	if pageSizes&(4096-1) != 0 {
		return 0, newError(op, syscall.EINVAL, "page size bitmap 0x%x allows sizes under 4 KiB", pageSizes)
	}
	return pageSizes, nil
}

// cString returns the bytes of b up to its first NUL (all of b without one):
// a fixed-size C char array such as ibv_device_attr.fw_ver.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// busyDetail describes the objects that keep a device open.
func busyDetail(name string, live map[string]int) string {
	kinds := []string{"PD", "MR", "UMEM", "UAR", "DevX object"}
	s := ""
	for _, k := range kinds {
		if n := live[k]; n > 0 {
			if s != "" {
				s += ", "
			}
			s += fmt.Sprintf("%d %s", n, k)
		}
	}
	return fmt.Sprintf("device %s still has %s alive; release them first", name, s)
}
