package devx

import (
	"syscall"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// FuzzMailbox feeds arbitrary mailboxes and return codes through the checks
// and the error mapping that every DevX call applies to outside bytes: none
// may panic, and their answers must agree with each other.
func FuzzMailbox(f *testing.F) {
	f.Add([]byte{0x01, 0x00, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}, make([]byte, 16), 0)
	f.Add([]byte{0x04, 0x00, 0, 0, 0, 0, 0, 0}, []byte{0x03, 0, 0, 0, 0x12, 0x34, 0x56, 0x78, 0, 0, 0, 0}, int(syscall.EREMOTEIO))
	f.Add([]byte{0x05, 0x00, 0, 0, 0, 7, 0, 0}, []byte{}, int(syscall.EINVAL))
	f.Add([]byte{}, []byte{1, 2, 3}, -1)
	f.Fuzz(func(t *testing.T, in, out []byte, rc int) {
		if err := checkMailbox("op", in, out, createOutMin); err == nil {
			if len(in) < mailboxHeader || len(out) < createOutMin || len(in)%4 != 0 || len(out)%4 != 0 {
				t.Fatalf("accepted in %d bytes, out %d bytes", len(in), len(out))
			}
			if objID(out) != mlx5.Get32(out, objIDField) {
				t.Fatal("objID disagrees with the field accessor")
			}
		}
		_ = objID(out)
		errno := rc & 0xfff
		err := cmdResult("op", in, out, errno)
		st, _ := mlx5.OutStatus(out)
		if (err == nil) != (errno == 0 && st == mlx5.StatusOK && len(out) >= 8) {
			t.Fatalf("rc %d status %v: err %v", errno, st, err)
		}
		if err != nil {
			if _, ok := mlx5.AsCmdError(err); !ok {
				t.Fatalf("%T is no *mlx5.CmdError", err)
			}
			_ = err.Error()
		}
		_ = cString(in)
	})
}
