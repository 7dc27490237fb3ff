package mlx5

import (
	"encoding/binary"
	"fmt"
)

// Doorbell records and UAR doorbell values. Records are small big-endian structures in memory the NIC reads; the
// UAR doorbell is one 8-byte store to an MMIO register (UAROffsetBF,
// UAROffsetNoDBR, UAROffsetCQArm).

// QP doorbell record layout: 8 bytes, two BE32 counters.
const (
	QPDBRSize       = 8
	QPDBRRecvOffset = 0 // MLX5_RCV_DBR: receive counter (receive WQEs), low 16 bits
	QPDBRSendOffset = 4 // MLX5_SND_DBR: send counter (WQEBBs, one past the last posted), low 16 bits
)

// CQ doorbell record layout: 8 bytes, two BE32 words.
const (
	CQDBRSize      = 8
	CQDBRCIOffset  = 0 // MLX5_CQ_SET_CI: consumer index, 24 bits
	CQDBRArmOffset = 4 // MLX5_CQ_ARM_DB: the arm word
)

// DBRCounterMask keeps the part of a free-running work-queue counter that a
// doorbell record carries and the NIC compares: the low 16 bits of the send
// and receive counters of a QP doorbell record and of the counter of an SRQ
// (RMP) doorbell record. The upper 16 bits of such a word are ignored.
const DBRCounterMask = 0xffff

const cqIndexMask = 0xffffff

// QPDBRWord returns the value of a QP doorbell record counter for a
// free-running counter: counter & DBRCounterMask, upper 16 bits zero. Store
// it big-endian (PutQPDBRSend) or, for a single 32-bit MMIO-style store, as
// BE32Native(QPDBRWord(pi)).
func QPDBRWord(counter uint32) uint32 { return counter & DBRCounterMask }

// PutQPDBRSend writes the SQ producer index pi (WQEBBs) into the send counter
// of QP doorbell record dbr (at least QPDBRSize bytes).
func PutQPDBRSend(dbr []byte, pi uint32) {
	binary.BigEndian.PutUint32(dbr[QPDBRSendOffset:QPDBRSendOffset+4], QPDBRWord(pi))
}

// PutQPDBRRecv writes the RQ head (receive WQEs) into the receive counter of
// QP doorbell record dbr.
func PutQPDBRRecv(dbr []byte, head uint32) {
	binary.BigEndian.PutUint32(dbr[QPDBRRecvOffset:QPDBRRecvOffset+4], QPDBRWord(head))
}

// QPDBRSend reads the 16-bit SQ producer index from a QP doorbell record. The
// upper 16 bits of the word are ignored, as the NIC does.
func QPDBRSend(dbr []byte) uint16 {
	return uint16(binary.BigEndian.Uint32(dbr[QPDBRSendOffset : QPDBRSendOffset+4]))
}

// QPDBRRecv reads the 16-bit RQ counter from a QP doorbell record.
func QPDBRRecv(dbr []byte) uint16 {
	return uint16(binary.BigEndian.Uint32(dbr[QPDBRRecvOffset : QPDBRRecvOffset+4]))
}

// PutCQDBRCI writes consumer index ci (mod 2^24) into CQ doorbell record dbr.
func PutCQDBRCI(dbr []byte, ci uint32) {
	binary.BigEndian.PutUint32(dbr[CQDBRCIOffset:CQDBRCIOffset+4], ci&cqIndexMask)
}

// CQDBRCI reads the 24-bit consumer index from a CQ doorbell record.
func CQDBRCI(dbr []byte) uint32 {
	return binary.BigEndian.Uint32(dbr[CQDBRCIOffset:CQDBRCIOffset+4]) & cqIndexMask
}

// PutCQDBRArm writes arm word w (see CQArmWord) into CQ doorbell record dbr.
func PutCQDBRArm(dbr []byte, w uint32) {
	binary.BigEndian.PutUint32(dbr[CQDBRArmOffset:CQDBRArmOffset+4], w)
}

// CQDBRArm reads the arm word from a CQ doorbell record.
func CQDBRArm(dbr []byte) uint32 {
	return binary.BigEndian.Uint32(dbr[CQDBRArmOffset : CQDBRArmOffset+4])
}

// CQArmWord builds the arm word (sn << 28) | (cmd << 24) | (ci & 0xFFFFFF):
// sn is the 2-bit arm sequence number, incremented per event received.
func CQArmWord(sn uint8, cmd CQArmCmd, ci uint32) uint32 {
	return uint32(sn&3)<<28 | uint32(cmd&0xf)<<24 | ci&cqIndexMask
}

// DecodeCQArmWord splits an arm word into its sequence number, command and
// 24-bit consumer index.
func DecodeCQArmWord(w uint32) (sn uint8, cmd CQArmCmd, ci uint32) {
	return uint8(w>>28) & 3, CQArmCmd(w>>24) & 0xf, w & cqIndexMask
}

// Doorbell is the 8-byte value of a UAR doorbell store, in memory order: byte
// 0 is stored at the lowest address. Its String is the hex of those bytes
// (the form of the worked doorbell images).
type Doorbell [8]byte

// Uint64 returns the doorbell as the host-order value to pass to a 64-bit
// store (mmio.Store64) so that memory receives the bytes in order.
func (d Doorbell) Uint64() uint64 { return binary.NativeEndian.Uint64(d[:]) }

// DoorbellFromUint64 is the inverse of Uint64: the bytes a 64-bit store of v
// puts in memory.
func DoorbellFromUint64(v uint64) Doorbell {
	var d Doorbell
	binary.NativeEndian.PutUint64(d[:], v)
	return d
}

func (d Doorbell) String() string { return fmt.Sprintf("%016x", binary.BigEndian.Uint64(d[:])) }

// SQDoorbell is the rdma-core style send doorbell: the first 8 bytes of the
// control segment of the last WQE posted (its opmod, wqe_index, opcode, QPN
// and ds). Write the SQ doorbell record first.
func SQDoorbell(c CtrlSeg) Doorbell {
	var b [DSSize]byte
	c.Put(b[:])
	var d Doorbell
	copy(d[:], b[:8])
	return d
}

// SQDoorbellPI is the gpunetio style send doorbell: a synthetic control
// segment with wqe_index = the new producer index pi, opcode 0 and ds 0.
// Like gpunetio the first word is
// BE32(pi << 8) without masking pi to 16 bits, so bits 16..23 of pi land in
// the opmod byte, which the NIC ignores. It is also the doorbell of a
// DBR-less QP (UAROffsetNoDBR).
func SQDoorbellPI(qpn uint32, pi uint32) Doorbell {
	var d Doorbell
	binary.BigEndian.PutUint32(d[0:4], pi<<8)
	binary.BigEndian.PutUint32(d[4:8], (qpn&0xffffff)<<8)
	return d
}

// DecodeSQDoorbell interprets a send doorbell as the emulator must accept
// both styles: qpn from bytes 4..7 [31:8] and the new producer
// index (wqe_index + ceil(ds / 4)) mod 2^16. The opmod byte is ignored.
func DecodeSQDoorbell(d Doorbell) (qpn uint32, pi uint16) {
	_, idx, _, qpn, ds := DecodeCtrlHead(d[:])
	return qpn, idx + uint16(WQEBBs(ds))
}

// CQArmDoorbell is the value written to the UAR at UAROffsetCQArm to arm CQ
// cqn: the arm word (also stored to the CQ doorbell record first) in bytes
// 0..3 and the CQN in bytes 4..7, both big-endian.
func CQArmDoorbell(armWord, cqn uint32) Doorbell {
	var d Doorbell
	binary.BigEndian.PutUint32(d[0:4], armWord)
	binary.BigEndian.PutUint32(d[4:8], cqn&0xffffff)
	return d
}

// DecodeCQArmDoorbell splits a CQ arm doorbell into the arm word and the CQN
// (24 bits).
func DecodeCQArmDoorbell(d Doorbell) (armWord, cqn uint32) {
	return binary.BigEndian.Uint32(d[0:4]), binary.BigEndian.Uint32(d[4:8]) & 0xffffff
}

// BE32Native returns the host-order value whose in-memory image is v in
// big-endian order: what a single 32-bit store (mmio.Store32) must be given
// to write a doorbell record word.
func BE32Native(v uint32) uint32 {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return binary.NativeEndian.Uint32(b[:])
}
