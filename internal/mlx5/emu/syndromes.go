package emu

import (
	"fmt"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Syndrome values the emulated firmware puts in the output mailbox of a
// rejected command. Real firmware syndromes are opaque; these are the
// emulator's own, one per failure reason, stable across releases (never
// renumber one: tests and users match on them). The table below gives each
// one's status and meaning; SyndromeInfo looks them up.
const (
	SynBadInLen        uint32 = 0x0e000001 // input mailbox shorter than the command's layout
	SynBadOutLen       uint32 = 0x0e000002 // output mailbox shorter than the command's layout
	SynBadOpcode       uint32 = 0x0e000003 // opcode unknown to the firmware
	SynBadOpMod        uint32 = 0x0e000004 // op_mod not defined for the command
	SynCapType         uint32 = 0x0e000005 // QUERY_HCA_CAP of a capability type the device lacks
	SynOtherFunction   uint32 = 0x0e000006 // other_function / other_vport / function_id set
	SynBadPort         uint32 = 0x0e000007 // port number other than 1
	SynGIDIndex        uint32 = 0x0e000008 // GID index outside the table or an empty entry
	SynReserved        uint32 = 0x0e000009 // a reserved or read-only field is not zero
	SynCQUMEM          uint32 = 0x0e000010 // cq_umem_id names no UMEM of the context
	SynCQUMEMRange     uint32 = 0x0e000011 // CQ ring outside its UMEM, or not page aligned
	SynCQDBRUMEM       uint32 = 0x0e000012 // dbr_umem_id names no UMEM of the context
	SynCQDBRRange      uint32 = 0x0e000013 // CQ DBR outside its UMEM or not 8-byte aligned
	SynCQSize          uint32 = 0x0e000014 // log_cq_size above log_max_cq_sz
	SynCQESize         uint32 = 0x0e000015 // cqe_sz other than 64 bytes
	SynCQCompression   uint32 = 0x0e000016 // CQE compression requested
	SynCQUAR           uint32 = 0x0e000017 // uar_page names no UAR of the context
	SynCQEQN           uint32 = 0x0e000018 // c_eqn is not an EQ of the device
	SynCQBusy          uint32 = 0x0e000019 // DESTROY_CQ of a CQ that QPs still use
	SynCQPageOffset    uint32 = 0x0e00001a // page_offset not zero
	SynNoCQ            uint32 = 0x0e00001b // cqn names no CQ of the context
	SynCQRingOwned     uint32 = 0x0e00001c // a CQ ring entry looks written (owner 0, opcode not INVALID)
	SynQPServiceType   uint32 = 0x0e000020 // st other than RC or UC
	SynQPPD            uint32 = 0x0e000021 // pd names no PD of the context
	SynQPUAR           uint32 = 0x0e000022 // uar_page names no UAR of the context
	SynQPCQSnd         uint32 = 0x0e000023 // cqn_snd names no CQ of the context
	SynQPCQRcv         uint32 = 0x0e000024 // cqn_rcv names no CQ of the context
	SynQPSQSize        uint32 = 0x0e000025 // log_sq_size above log_max_qp_sz (or 0 with an SQ)
	SynQPRQType        uint32 = 0x0e000026 // rq_type not supported
	SynQPRQSize        uint32 = 0x0e000027 // log_rq_size / log_rq_stride out of range
	SynQPWQUMEM        uint32 = 0x0e000028 // wq_umem_id names no UMEM of the context
	SynQPWQRange       uint32 = 0x0e000029 // WQ buffer outside its UMEM or not page aligned
	SynQPDBRUMEM       uint32 = 0x0e00002a // dbr_umem_id names no UMEM of the context
	SynQPDBRRange      uint32 = 0x0e00002b // QP DBR outside its UMEM or not 8-byte aligned
	SynQPDBRMode       uint32 = 0x0e00002c // send_dbr_mode not supported by this device
	SynQPTSFormat      uint32 = 0x0e00002d // ts_format not allowed by the capabilities
	SynQPCDSlave       uint32 = 0x0e00002e // cd_slave_send / cd_slave_receive (not emulated)
	SynQPSRQ           uint32 = 0x0e00002f // rq_type SRQ without a valid RMP
	SynNoQP            uint32 = 0x0e000030 // qpn names no QP of the context
	SynQPBadTransition uint32 = 0x0e000031 // transition not legal from the QP's current state
	SynQPOptMask       uint32 = 0x0e000032 // opt_param_mask has a bit this transition does not allow
	SynQPMTU           uint32 = 0x0e000033 // mtu not in 1..5 or above the port MTU
	SynQPMsgMax        uint32 = 0x0e000034 // log_msg_max above log_max_msg
	SynQPRRAMax        uint32 = 0x0e000035 // log_rra_max above log_max_ra_res_qp
	SynQPSRAMax        uint32 = 0x0e000036 // log_sra_max above log_max_ra_req_qp
	SynQPPort          uint32 = 0x0e000037 // vhca_port_num other than 1
	SynQPSrcGID        uint32 = 0x0e000038 // src_addr_index names no GID entry
	SynQPRemoteGID     uint32 = 0x0e000039 // rgid_rip not of the local GID's family (IPv4-mapped)
	SynQPAtomicMode    uint32 = 0x0e00003a // atomic_mode not supported, or set without rae
	SynQPPKey          uint32 = 0x0e00003b // pkey_index outside the P_Key table
	SynQPPMState       uint32 = 0x0e00003c // pm_state other than MIGRATED
	SynQPUDPSport      uint32 = 0x0e00003d // udp_sport outside the RoCE caps range
	SynQPNoDBRSize     uint32 = 0x0e00003e // DBR-less SQ larger than log_max_send_dbr_less_qp_sq
	SynQPRemoteQPN     uint32 = 0x0e00003f // remote_qpn zero
	SynQPScatterCQE    uint32 = 0x0e000046 // cs_res other than 0 or 1 (64-byte CQEs), or cs_req set
	SynRMPPD           uint32 = 0x0e000040 // RMP pd names no PD of the context
	SynRMPUMEM         uint32 = 0x0e000041 // RMP wq_umem_id names no UMEM, or the ring is outside it
	SynRMPSize         uint32 = 0x0e000042 // RMP log_wq_sz / log_wq_stride out of range
	SynNoRMP           uint32 = 0x0e000043 // rmpn names no RMP of the context
	SynRMPBusy         uint32 = 0x0e000044 // DESTROY_RMP of an RMP that QPs still use
	SynRMPType         uint32 = 0x0e000045 // wq_type / state of the RMP not supported
	SynLimitCQ         uint32 = 0x0e000051 // all 2^log_max_cq CQs in use
	SynLimitQP         uint32 = 0x0e000052 // all 2^log_max_qp QPs in use
	SynLimitRMP        uint32 = 0x0e000053 // every 24-bit RMP number in use
	SynLimit           uint32 = 0x0e000050 // object table full (log_max_qp / log_max_cq / ...)
	SynEQSize          uint32 = 0x0e000060 // log_eq_size above the EQ size the emulator supports
	SynEQPAS           uint32 = 0x0e000061 // CREATE_EQ's PAS names no page the driver gave the device
	SynNoEQ            uint32 = 0x0e000062 // eq_number names no EQ
	SynRMPModify       uint32 = 0x0e000063 // MODIFY_RMP changes a field other than lwm, or lwm above the RMP size
)

type synInfo struct {
	status mlx5.Status
	what   string
}

var syndromeTable = map[uint32]synInfo{
	SynBadInLen:        {mlx5.StatusBadInpLen, "input mailbox shorter than the command's layout"},
	SynBadOutLen:       {mlx5.StatusBadOutpLen, "output mailbox shorter than the command's layout"},
	SynBadOpcode:       {mlx5.StatusBadOp, "opcode unknown to the firmware"},
	SynBadOpMod:        {mlx5.StatusBadParam, "op_mod not defined for the command"},
	SynCapType:         {mlx5.StatusBadParam, "capability type not supported"},
	SynOtherFunction:   {mlx5.StatusBadParam, "other_function/other_vport/function_id set"},
	SynBadPort:         {mlx5.StatusBadParam, "port number other than 1"},
	SynGIDIndex:        {mlx5.StatusBadParam, "GID index outside the table or empty"},
	SynReserved:        {mlx5.StatusBadParam, "reserved or read-only field not zero"},
	SynCQUMEM:          {mlx5.StatusBadRes, "cq_umem_id names no UMEM of the context"},
	SynCQUMEMRange:     {mlx5.StatusBadParam, "CQ ring outside its UMEM or not page aligned"},
	SynCQDBRUMEM:       {mlx5.StatusBadRes, "CQ dbr_umem_id names no UMEM of the context"},
	SynCQDBRRange:      {mlx5.StatusBadParam, "CQ DBR outside its UMEM or not 8-byte aligned"},
	SynCQSize:          {mlx5.StatusBadParam, "log_cq_size above log_max_cq_sz"},
	SynCQESize:         {mlx5.StatusBadParam, "cqe_sz other than 64 bytes"},
	SynCQCompression:   {mlx5.StatusBadParam, "CQE compression requested"},
	SynCQUAR:           {mlx5.StatusBadRes, "CQ uar_page names no UAR of the context"},
	SynCQEQN:           {mlx5.StatusBadRes, "c_eqn is not an EQ of the device"},
	SynCQBusy:          {mlx5.StatusResBusy, "CQ still used by a QP"},
	SynCQPageOffset:    {mlx5.StatusBadParam, "CQ page_offset not zero"},
	SynNoCQ:            {mlx5.StatusBadRes, "cqn names no CQ of the context"},
	SynCQRingOwned:     {mlx5.StatusBadParam, "CQ ring not initialised: an entry has owner 0 and a valid opcode (set op_own to 0xF1)"},
	SynQPServiceType:   {mlx5.StatusBadParam, "QP st other than RC or UC"},
	SynQPPD:            {mlx5.StatusBadRes, "QP pd names no PD of the context"},
	SynQPUAR:           {mlx5.StatusBadRes, "QP uar_page names no UAR of the context"},
	SynQPCQSnd:         {mlx5.StatusBadRes, "cqn_snd names no CQ of the context"},
	SynQPCQRcv:         {mlx5.StatusBadRes, "cqn_rcv names no CQ of the context"},
	SynQPSQSize:        {mlx5.StatusBadParam, "log_sq_size out of range"},
	SynQPRQType:        {mlx5.StatusBadParam, "rq_type not supported"},
	SynQPRQSize:        {mlx5.StatusBadParam, "log_rq_size/log_rq_stride out of range"},
	SynQPWQUMEM:        {mlx5.StatusBadRes, "wq_umem_id names no UMEM of the context"},
	SynQPWQRange:       {mlx5.StatusBadParam, "WQ buffer outside its UMEM or not page aligned"},
	SynQPDBRUMEM:       {mlx5.StatusBadRes, "QP dbr_umem_id names no UMEM of the context"},
	SynQPDBRRange:      {mlx5.StatusBadParam, "QP DBR outside its UMEM or not 8-byte aligned"},
	SynQPDBRMode:       {mlx5.StatusBadParam, "send_dbr_mode not supported by this device"},
	SynQPTSFormat:      {mlx5.StatusBadParam, "ts_format not allowed by the capabilities"},
	SynQPCDSlave:       {mlx5.StatusBadParam, "cd_slave_send/cd_slave_receive not emulated"},
	SynQPSRQ:           {mlx5.StatusBadRes, "rq_type SRQ without a valid RMP"},
	SynNoQP:            {mlx5.StatusBadRes, "qpn names no QP of the context"},
	SynQPBadTransition: {mlx5.StatusBadResState, "transition not legal from the current QP state"},
	SynQPOptMask:       {mlx5.StatusBadParam, "opt_param_mask bit not allowed for the transition"},
	SynQPMTU:           {mlx5.StatusBadParam, "mtu not in 1..5 or above the port MTU"},
	SynQPMsgMax:        {mlx5.StatusBadParam, "log_msg_max above log_max_msg"},
	SynQPRRAMax:        {mlx5.StatusBadParam, "log_rra_max above log_max_ra_res_qp"},
	SynQPSRAMax:        {mlx5.StatusBadParam, "log_sra_max above log_max_ra_req_qp"},
	SynQPPort:          {mlx5.StatusBadParam, "vhca_port_num other than 1"},
	SynQPSrcGID:        {mlx5.StatusBadParam, "src_addr_index names no GID entry"},
	SynQPRemoteGID:     {mlx5.StatusBadParam, "rgid_rip not IPv4-mapped like the local GID"},
	SynQPAtomicMode:    {mlx5.StatusBadParam, "atomic_mode not supported"},
	SynQPPKey:          {mlx5.StatusBadParam, "pkey_index outside the P_Key table"},
	SynQPPMState:       {mlx5.StatusBadParam, "pm_state other than MIGRATED"},
	SynQPUDPSport:      {mlx5.StatusBadParam, "udp_sport outside the RoCE caps range"},
	SynQPNoDBRSize:     {mlx5.StatusBadParam, "DBR-less SQ above log_max_send_dbr_less_qp_sq"},
	SynQPRemoteQPN:     {mlx5.StatusBadParam, "remote_qpn zero"},
	SynQPScatterCQE:    {mlx5.StatusBadParam, "cs_res other than 0 or 1 (64-byte CQEs), or requester scatter-to-CQE (cs_req)"},
	SynRMPPD:           {mlx5.StatusBadRes, "RMP pd names no PD of the context"},
	SynRMPUMEM:         {mlx5.StatusBadRes, "RMP UMEM missing or ring outside it"},
	SynRMPSize:         {mlx5.StatusBadParam, "RMP size or stride out of range"},
	SynNoRMP:           {mlx5.StatusBadRes, "rmpn names no RMP of the context"},
	SynRMPBusy:         {mlx5.StatusResBusy, "RMP still used by a QP"},
	SynRMPType:         {mlx5.StatusBadParam, "RMP wq_type or state not supported"},
	SynLimitCQ:         {mlx5.StatusLimErr, fmt.Sprintf("CQ table full: all %d CQs in use (log_max_cq %d)", 1<<capLogMaxCQ, capLogMaxCQ)},
	SynLimitQP:         {mlx5.StatusLimErr, fmt.Sprintf("QP table full: all %d QPs in use (log_max_qp %d)", 1<<capLogMaxQP, capLogMaxQP)},
	SynLimitRMP:        {mlx5.StatusLimErr, fmt.Sprintf("RMP table full: all %d RMP numbers in use", mask24)},
	SynLimit:           {mlx5.StatusLimErr, "object table full"},
	SynEQSize:          {mlx5.StatusBadParam, "log_eq_size out of range"},
	SynEQPAS:           {mlx5.StatusBadParam, "EQ PAS names no page of the driver"},
	SynNoEQ:            {mlx5.StatusBadRes, "eq_number names no EQ"},
	SynRMPModify:       {mlx5.StatusBadParam, "MODIFY_RMP of a field other than lwm, or lwm above the RMP size"},
}

// SyndromeInfo returns the status a syndrome is reported with and what it
// means; ok is false for a value the emulator never reports.
func SyndromeInfo(syndrome uint32) (status mlx5.Status, meaning string, ok bool) {
	i, ok := syndromeTable[syndrome]
	return i.status, i.what, ok
}

// fwError is a firmware rejection: a status and one of the syndromes above.
type fwError uint32

func (e fwError) status() mlx5.Status { return syndromeTable[uint32(e)].status }
