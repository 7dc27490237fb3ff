package common

// The constants of the DOCA GPUNetIO verbs examples.
const (
	// DefaultIters is the default number of iterations per message size (-i).
	DefaultIters = 2048
	// BWThreads is the number of CUDA threads of the bandwidth kernels; -i
	// must be a multiple of it.
	BWThreads = 512
	// PutBWBlocks is the number of CUDA blocks of put_bw (2 x 256 threads).
	PutBWBlocks = 2
	// SQWQEs is the send-queue depth of the high-level QP.
	SQWQEs = 2048
	// DefaultOOBPort is the TCP port of the out-of-band exchange.
	DefaultOOBPort = 2000
	// PortNum is the RDMA device port the examples use.
	PortNum = 1
)

// BWSizes are the message sizes of put_bw and write_bw, in bytes.
var BWSizes = []uint64{1, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576}

// LatSizes are the message sizes of write_lat and twosided_lat, in bytes.
var LatSizes = []uint64{1, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}

// AlignUp rounds n up to a multiple of align (a power of two).
func AlignUp(n, align uint64) uint64 {
	return (n + align - 1) &^ (align - 1)
}
