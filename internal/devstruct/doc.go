// Package devstruct is the Go side of the device-visible structs that the
// host exports to CUDA kernels: struct doca_gpu_dev_verbs_qp (392 bytes) and
// its two embedded struct doca_gpu_dev_verbs_cq (64 bytes each: cq_sq and
// cq_rq).
//
// There is one definition of those structs: the C header
// cuda/include/common/doca_gpunetio_verbs_dev.h, which kernels include. This
// package includes the same header through cgo and takes every size and
// field offset from the C compiler (sizeof / offsetof), so a change to the
// header moves the Go encoder with it; the tests pin the layout (DOCA 2.0's
// send half and CQ, the DOCA SDK's receive-queue block, then ours: see
// cuda/README.md, "Device QP layout") so such a change cannot go unnoticed.
//
// This package is the one owner of the device-struct layout on the Go side.
// Besides the QP and CQ it encodes, Layout returns the compiler's offsets,
// sizes and alignments of every struct of the shared header that kernels,
// the NIC or Go code rely on (the extension area, the 64-byte WQE view, the
// mlx5 WQE segments, the masked-atomic operands, the CQE and error CQE).
// internal/devhost takes its in-place offsets from here, and the tests of
// internal/hdrcheck hold mlx5's WQE and CQE codecs to this table.
//
// QP and CQ are plain Go values mirroring the fields. Encode/Put produce the
// exact byte image (reserved bytes zero) to copy into GPU memory; DecodeQP
// reads an image back (for example after a kernel ran) and refuses short or
// corrupted images. Host and GPU are little-endian; fields the C header
// declares __be32 hold already byte-swapped values (see BE32).
//
// The package has no state and every function is safe for concurrent use.
package devstruct
