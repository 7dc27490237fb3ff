package emugpu

import _ "embed"

// copierPTX is copier.cu compiled to PTX for compute_70 (any GPU the
// driver can JIT it for: Volta and newer). TestCopierPTXCurrent checks it
// against the source where nvcc 11.8 is installed, as on CI.
//
//go:generate sh -c "nvcc -ptx -arch=compute_70 -O3 -o copier.ptx copier.cu"
//go:embed copier.ptx
var copierPTX []byte
