package devx

import (
	"syscall"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// cmdResult turns the return value of a DevX command into an error: nil on
// success with an OK status, else a *mlx5.CmdError (status and syndrome are
// read from out when the kernel says EREMOTEIO).
func cmdResult(op string, in, out []byte, rc int) error {
	if rc != 0 {
		return mlx5.NewCmdError(op, in, out, syscall.Errno(rc))
	}
	if st, _ := mlx5.OutStatus(out); st != mlx5.StatusOK {
		return mlx5.NewCmdError(op, in, out, 0)
	}
	return nil
}
