package verbs

// The two drivers behind the boundary register themselves: real mlx5 devices
// through rdma-core, and the emulated ConnectX (emu0, emu1, ...).
import (
	_ "github.com/gdaki/gpunetio/internal/mlx5/devx"
	_ "github.com/gdaki/gpunetio/internal/mlx5/emu"
)
