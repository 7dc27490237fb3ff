package verbs

import "math/bits"

// Queue geometry: how DOCA Verbs sizes CQ, QP and SRQ buffers from the
// requested work-request counts. The functions are pure so their arithmetic
// is tested on its own.

const (
	wqebb        = 64 // send WQE basic block
	octoword     = 16 // data segment unit
	cqeSize      = 64
	dbrArea      = 64 // bytes reserved for a doorbell record
	minRQBytes   = 64
	minLLSRQWQE  = 32
	logMsgMax    = 30 // 1 GiB largest message, as DOCA programs it
	maxUserIndex = 1<<24 - 1
	psnMask      = 1<<24 - 1
	qpnMask      = 1<<24 - 1
)

func isPow2(v uint64) bool { return v != 0 && v&(v-1) == 0 }

func nextPow2(v uint64) uint64 {
	if v <= 1 {
		return 1
	}
	return 1 << (64 - bits.LeadingZeros64(v-1))
}

func log2(v uint64) uint32 { return uint32(63 - bits.LeadingZeros64(v)) }

func alignUp(v, a uint64) uint64 { return (v + a - 1) &^ (a - 1) }

// sqGeometry is the sized send queue.
type sqGeometry struct {
	wqeSize   uint64 // bytes per WR slot (a multiple of 64)
	wqebbs    uint64 // ring size in WQEBBs (power of two)
	logSize   uint32
	wrCap     uint32 // real WR capacity: bytes / wqeSize
	maxInline uint32 // rewritten inline capacity, 0 when none was asked
}

// sizeSQ sizes the send queue for sqWR work requests of sendSGEs gather
// entries and maxInline inline bytes, within the device limits maxWQESz
// (bytes per WQE) and maxWQEBBs (ring size).
func sizeSQ(op string, sqWR, sendSGEs, maxInline uint32, maxWQESz uint32, maxWQEBBs uint64) (sqGeometry, error) {
	var g sqGeometry
	if maxWQESz == 0 {
		return g, newErr(op, ErrInvalidValue, "device reports max_wqe_sz_sq 0")
	}
	if uint64(sqWR) > 0x7fffffff/uint64(maxWQESz) {
		return g, newErr(op, ErrInvalidValue, "sq_wr %d is too large for WQEs of up to %d bytes", sqWR, maxWQESz)
	}
	if sendSGEs == 0 {
		return g, newErr(op, ErrInvalidValue, "send_max_sges is 0 with sq_wr %d", sqWR)
	}
	basic := uint64(octoword + octoword + octoword*uint64(sendSGEs))
	if basic > uint64(maxWQESz) {
		return g, newErr(op, ErrInvalidValue, "send_max_sges %d makes a %d-byte send WQE, the device max is %d", sendSGEs, basic, maxWQESz)
	}
	size := basic
	if maxInline > 0 {
		inl := uint64(octoword+octoword) + alignUp(4+uint64(maxInline), octoword)
		if inl > uint64(maxWQESz) {
			return g, newErr(op, ErrInvalidValue, "max_inline_data %d makes a %d-byte send WQE, the device max is %d", maxInline, inl, maxWQESz)
		}
		if inl > size {
			size = inl
		}
	}
	g.wqeSize = alignUp(size, wqebb)
	bytes := nextPow2(g.wqeSize * uint64(sqWR))
	g.wqebbs = bytes / wqebb
	if g.wqebbs > maxWQEBBs {
		return g, newErr(op, ErrInvalidValue, "sq_wr %d needs a send queue of %d WQEBBs, the device max is %d", sqWR, g.wqebbs, maxWQEBBs)
	}
	g.logSize = log2(g.wqebbs)
	g.wrCap = uint32(bytes / g.wqeSize)
	if maxInline > 0 {
		g.maxInline = uint32(g.wqeSize - 36)
	}
	return g, nil
}

// rqGeometry is the sized receive queue.
type rqGeometry struct {
	wqeSize   uint64 // bytes per receive WQE (16 * SGEs, power of two)
	sges      uint32
	entries   uint64
	bytes     uint64
	logSize   uint32
	logStride uint32 // log2(wqeSize) - 4
}

func sizeRQ(op string, rqWR, recvSGEs uint32, maxQPWR uint32, maxWQESzRQ uint32) (rqGeometry, error) {
	var g rqGeometry
	if rqWR > maxQPWR {
		return g, newErr(op, ErrInvalidValue, "rq_wr %d exceeds the device's %d", rqWR, maxQPWR)
	}
	if recvSGEs == 0 {
		return g, newErr(op, ErrInvalidValue, "receive_max_sges is 0 with rq_wr %d", rqWR)
	}
	g.sges = uint32(nextPow2(uint64(recvSGEs)))
	g.wqeSize = octoword * uint64(g.sges)
	if g.wqeSize > uint64(maxWQESzRQ) {
		return g, newErr(op, ErrInvalidValue, "receive_max_sges %d (rounded up to %d) makes a %d-byte receive WQE, the device max is %d", recvSGEs, g.sges, g.wqeSize, maxWQESzRQ)
	}
	g.logStride = log2(g.wqeSize) - 4
	g.bytes = nextPow2(uint64(rqWR) * g.wqeSize)
	if g.bytes < minRQBytes {
		g.bytes = minRQBytes
	}
	g.entries = g.bytes / g.wqeSize
	g.logSize = log2(g.entries)
	return g, nil
}

// srqGeometry is the sized SRQ (an RMP).
type srqGeometry struct {
	wqeSize  uint64
	sges     uint32 // effective SGEs after rounding
	entries  uint64
	bytes    uint64
	dbrOff   uint64
	logSize  uint32
	logWQESz uint32
}

func sizeSRQ(t SRQType, wr, sges uint32) srqGeometry {
	var g srqGeometry
	size := uint64(octoword) * uint64(sges)
	if t == SRQLinkedList {
		size += octoword
		if size < minLLSRQWQE {
			size = minLLSRQWQE
		}
	}
	g.wqeSize = nextPow2(size)
	if t == SRQLinkedList {
		g.sges = uint32((g.wqeSize - octoword) / octoword)
	} else {
		g.sges = uint32(g.wqeSize / octoword)
	}
	g.bytes = nextPow2(uint64(wr) * g.wqeSize)
	g.entries = g.bytes / g.wqeSize
	g.dbrOff = alignUp(g.entries*g.wqeSize, dbrArea)
	g.logSize = log2(g.entries)
	g.logWQESz = log2(g.wqeSize)
	return g
}
