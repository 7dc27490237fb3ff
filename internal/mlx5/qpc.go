package mlx5

import "fmt"

// QP context (qpc), address path (ads) and the
// value encodings of their fields.

// Sizes of the QP context and the address path in bytes.
const (
	QPCLen = 232
	ADSLen = 44
)

// Positions of the address paths inside the qpc, in bits.
const (
	QPCPrimaryPathBit   = 0x0c0
	QPCSecondaryPathBit = 0x220
)

// enumString names v from names, or formats it as PREFIX_0x.. when unknown.
func enumString(names map[uint8]string, prefix string, v uint8) string {
	if n, ok := names[v]; ok {
		return n
	}
	return fmt.Sprintf("%s_0x%x", prefix, v)
}

// QPState is qpc.state (read-only; QUERY_QP reports it).
type QPState uint8

const (
	QPStateRST        QPState = 0
	QPStateINIT       QPState = 1
	QPStateRTR        QPState = 2
	QPStateRTS        QPState = 3
	QPStateSQER       QPState = 4
	QPStateSQD        QPState = 5
	QPStateERR        QPState = 6
	QPStateSQDraining QPState = 7
	QPStateSuspended  QPState = 9
)

var qpStateNames = map[uint8]string{0: "RST", 1: "INIT", 2: "RTR", 3: "RTS", 4: "SQER", 5: "SQD",
	6: "ERR", 7: "SQ_DRAINING", 9: "SUSPENDED"}

func (s QPState) String() string { return enumString(qpStateNames, "QP_STATE", uint8(s)) }

// ServiceType is qpc.st; the library uses RC.
type ServiceType uint8

const (
	STRC          ServiceType = 0
	STUC          ServiceType = 1
	STUD          ServiceType = 2
	STXRC         ServiceType = 3
	STDCI         ServiceType = 5
	STQP0         ServiceType = 7
	STQP1         ServiceType = 8
	STRawDatagram ServiceType = 9
	STRegUMR      ServiceType = 0xc
)

var stNames = map[uint8]string{0: "RC", 1: "UC", 2: "UD", 3: "XRC", 5: "DCI", 7: "QP0", 8: "QP1",
	9: "RAW_DATAGRAM", 0xc: "REG_UMR"}

func (t ServiceType) String() string { return enumString(stNames, "ST", uint8(t)) }

// PMState is qpc.pm_state (path migration); set MIGRATED.
type PMState uint8

const (
	PMStateArmed    PMState = 0
	PMStateRearm    PMState = 1
	PMStateMigrated PMState = 3
)

var pmStateNames = map[uint8]string{0: "ARMED", 1: "REARM", 3: "MIGRATED"}

func (p PMState) String() string { return enumString(pmStateNames, "PM_STATE", uint8(p)) }

// MTU is the PRM path-MTU code of qpc.mtu.
type MTU uint8

const (
	MTU256    MTU = 1
	MTU512    MTU = 2
	MTU1024   MTU = 3
	MTU2048   MTU = 4
	MTU4096   MTU = 5
	MTU8192   MTU = 6
	MTURawEth MTU = 7
)

var mtuNames = map[uint8]string{1: "256", 2: "512", 3: "1024", 4: "2048", 5: "4096", 6: "8192", 7: "RAW_ETH"}

func (m MTU) String() string { return enumString(mtuNames, "MTU", uint8(m)) }

// Bytes returns the MTU in bytes, 0 for RAW_ETH and unknown codes.
func (m MTU) Bytes() int {
	if m >= MTU256 && m <= MTU8192 {
		return 128 << m
	}
	return 0
}

// MTUFromBytes returns the code of a power-of-two MTU of 256..8192 bytes.
func MTUFromBytes(n int) (MTU, bool) {
	for m := MTU256; m <= MTU8192; m++ {
		if m.Bytes() == n {
			return m, true
		}
	}
	return 0, false
}

// RQType is qpc.rq_type.
type RQType uint8

const (
	RQTypeRegular  RQType = 0
	RQTypeSRQ      RQType = 1 // SRQ / RMP / XRC-SRQ / XRQ, see srqn_rmpn_xrqn
	RQTypeCRQ      RQType = 2
	RQTypeZeroSize RQType = 3
)

var rqTypeNames = map[uint8]string{0: "REGULAR", 1: "SRQ", 2: "CRQ", 3: "ZERO_SIZE"}

func (t RQType) String() string { return enumString(rqTypeNames, "RQ_TYPE", uint8(t)) }

// SendDBRMode is qpc.send_dbr_mode.
type SendDBRMode uint8

const (
	SendDBRValid    SendDBRMode = 0 // the NIC reads the SQ doorbell record
	SendDBRNoDBRExt SendDBRMode = 1 // doorbell-only (cap2 send_dbr_mode_no_dbr_ext)
	SendDBRNoDBRInt SendDBRMode = 2
)

var sendDBRNames = map[uint8]string{0: "DBR_VALID", 1: "NO_DBR_EXT", 2: "NO_DBR_INT"}

func (m SendDBRMode) String() string { return enumString(sendDBRNames, "SEND_DBR_MODE", uint8(m)) }

// AtomicMode is qpc.atomic_mode (responder atomic size/semantics).
type AtomicMode uint8

const (
	AtomicModeNone   AtomicMode = 0
	AtomicModeIBComp AtomicMode = 1
	AtomicModeCX     AtomicMode = 2
	AtomicMode8B     AtomicMode = 3
	AtomicMode16B    AtomicMode = 4
	AtomicMode32B    AtomicMode = 5
	AtomicMode64B    AtomicMode = 6
	AtomicMode128B   AtomicMode = 7
	AtomicMode256B   AtomicMode = 8
)

var atomicModeNames = map[uint8]string{0: "NONE", 1: "IB_COMP", 2: "CX", 3: "8B", 4: "16B", 5: "32B",
	6: "64B", 7: "128B", 8: "256B"}

func (m AtomicMode) String() string { return enumString(atomicModeNames, "ATOMIC_MODE", uint8(m)) }

// TSFormat is qpc.ts_format and cqc.cq_timestamp_format.
type TSFormat uint8

const (
	TSFreeRunning TSFormat = 0
	TSDefault     TSFormat = 1
	TSRealTime    TSFormat = 2
)

var tsNames = map[uint8]string{0: "FREE_RUNNING", 1: "DEFAULT", 2: "REAL_TIME"}

func (t TSFormat) String() string { return enumString(tsNames, "TS_FORMAT", uint8(t)) }

// ADSFields is the bit layout of AddressPath, relative to the start of the structure.
var ADSFields = struct {
	FL           Field // fl
	FreeAR       Field // free_ar
	PKeyIndex    Field // pkey_index
	GRH          Field // grh
	MLID         Field // mlid
	RLID         Field // rlid
	AckTimeout   Field // ack_timeout
	SrcAddrIndex Field // src_addr_index
	StatRate     Field // stat_rate
	HopLimit     Field // hop_limit
	TClass       Field // tclass
	FlowLabel    Field // flow_label
	RGID         Field // rgid_rip
	FDSCP        Field // f_dscp
	FECN         Field // f_ecn
	FEthPrio     Field // f_eth_prio
	ECN          Field // ecn
	DSCP         Field // dscp
	UDPSport     Field // udp_sport
	DEICFI       Field // dei_cfi
	EthPrio      Field // eth_prio
	SL           Field // sl
	VHCAPortNum  Field // vhca_port_num
	RMAC         Field // rmac
}{
	FL:           F(0x000, 1),
	FreeAR:       F(0x001, 1),
	PKeyIndex:    F(0x010, 16),
	GRH:          F(0x028, 1),
	MLID:         F(0x029, 7),
	RLID:         F(0x030, 16),
	AckTimeout:   F(0x040, 5),
	SrcAddrIndex: F(0x048, 8),
	StatRate:     F(0x054, 4),
	HopLimit:     F(0x058, 8),
	TClass:       F(0x064, 8),
	FlowLabel:    F(0x06c, 20),
	RGID:         F(0x080, 128),
	FDSCP:        F(0x104, 1),
	FECN:         F(0x105, 1),
	FEthPrio:     F(0x107, 1),
	ECN:          F(0x108, 2),
	DSCP:         F(0x10a, 6),
	UDPSport:     F(0x110, 16),
	DEICFI:       F(0x120, 1),
	EthPrio:      F(0x121, 3),
	SL:           F(0x124, 4),
	VHCAPortNum:  F(0x128, 8),
	RMAC:         F(0x130, 48),
}

// AddressPath is the ads structure: the primary path sits at qpc bit 0x0c0,
// the secondary (APM only, leave zero) at 0x220. RMAC is the 6-byte MAC that
// the PRM splits into rmac_47_32 and rmac_31_0 (contiguous, wire order).
type AddressPath struct {
	FL           bool     // fl
	FreeAR       bool     // free_ar
	PKeyIndex    uint16   // pkey_index
	GRH          bool     // grh
	MLID         uint8    // mlid
	RLID         uint16   // rlid
	AckTimeout   uint8    // ack_timeout
	SrcAddrIndex uint8    // src_addr_index
	StatRate     uint8    // stat_rate
	HopLimit     uint8    // hop_limit
	TClass       uint8    // tclass
	FlowLabel    uint32   // flow_label
	RGID         [16]byte // rgid_rip
	FDSCP        bool     // f_dscp
	FECN         bool     // f_ecn
	FEthPrio     bool     // f_eth_prio
	ECN          uint8    // ecn
	DSCP         uint8    // dscp
	UDPSport     uint16   // udp_sport
	DEICFI       bool     // dei_cfi
	EthPrio      uint8    // eth_prio
	SL           uint8    // sl
	VHCAPortNum  uint8    // vhca_port_num
	RMAC         [6]byte  // rmac
}

func (x *AddressPath) bindings() []binding {
	return []binding{
		bindBool("fl", ADSFields.FL, &x.FL),
		bindBool("free_ar", ADSFields.FreeAR, &x.FreeAR),
		bindUint("pkey_index", ADSFields.PKeyIndex, &x.PKeyIndex),
		bindBool("grh", ADSFields.GRH, &x.GRH),
		bindUint("mlid", ADSFields.MLID, &x.MLID),
		bindUint("rlid", ADSFields.RLID, &x.RLID),
		bindUint("ack_timeout", ADSFields.AckTimeout, &x.AckTimeout),
		bindUint("src_addr_index", ADSFields.SrcAddrIndex, &x.SrcAddrIndex),
		bindUint("stat_rate", ADSFields.StatRate, &x.StatRate),
		bindUint("hop_limit", ADSFields.HopLimit, &x.HopLimit),
		bindUint("tclass", ADSFields.TClass, &x.TClass),
		bindUint("flow_label", ADSFields.FlowLabel, &x.FlowLabel),
		bindRaw("rgid_rip", ADSFields.RGID, x.RGID[:]),
		bindBool("f_dscp", ADSFields.FDSCP, &x.FDSCP),
		bindBool("f_ecn", ADSFields.FECN, &x.FECN),
		bindBool("f_eth_prio", ADSFields.FEthPrio, &x.FEthPrio),
		bindUint("ecn", ADSFields.ECN, &x.ECN),
		bindUint("dscp", ADSFields.DSCP, &x.DSCP),
		bindUint("udp_sport", ADSFields.UDPSport, &x.UDPSport),
		bindBool("dei_cfi", ADSFields.DEICFI, &x.DEICFI),
		bindUint("eth_prio", ADSFields.EthPrio, &x.EthPrio),
		bindUint("sl", ADSFields.SL, &x.SL),
		bindUint("vhca_port_num", ADSFields.VHCAPortNum, &x.VHCAPortNum),
		bindRaw("rmac", ADSFields.RMAC, x.RMAC[:]),
	}
}

// QPCFields is the bit layout of QPContext, relative to the start of the structure.
var QPCFields = struct {
	State                   Field // state
	LAGTXPortAffinity       Field // lag_tx_port_affinity
	ST                      Field // st
	IsolateVLTC             Field // isolate_vl_tc
	PMState                 Field // pm_state
	ReqE2ECreditMode        Field // req_e2e_credit_mode
	OffloadType             Field // offload_type
	EndPaddingMode          Field // end_padding_mode
	WQSignature             Field // wq_signature
	BlockLBMC               Field // block_lb_mc
	AtomicLikeWriteEn       Field // atomic_like_write_en
	LatencySensitive        Field // latency_sensitive
	DrainSigErr             Field // drain_sigerr
	PD                      Field // pd
	MTU                     Field // mtu
	LogMsgMax               Field // log_msg_max
	LogRQSize               Field // log_rq_size
	LogRQStride             Field // log_rq_stride
	NoSQ                    Field // no_sq
	LogSQSize               Field // log_sq_size
	TSFormat                Field // ts_format
	DataInOrder             Field // data_in_order
	RLKY                    Field // rlky
	ULPStatelessOffloadMode Field // ulp_stateless_offload_mode
	CounterSetID            Field // counter_set_id
	UARPage                 Field // uar_page
	SendDBRMode             Field // send_dbr_mode
	UserIndex               Field // user_index
	LogPageSize             Field // log_page_size
	RemoteQPN               Field // remote_qpn
	LogAckReqFreq           Field // log_ack_req_freq
	LogSRAMax               Field // log_sra_max
	RetryCount              Field // retry_count
	RNRRetry                Field // rnr_retry
	FRE                     Field // fre
	CurRNRRetry             Field // cur_rnr_retry
	CurRetryCount           Field // cur_retry_count
	NextSendPSN             Field // next_send_psn
	CQNSnd                  Field // cqn_snd
	DETHSQPN                Field // deth_sqpn
	LastAckedPSN            Field // last_acked_psn
	SSN                     Field // ssn
	LogRRAMax               Field // log_rra_max
	AtomicMode              Field // atomic_mode
	RRE                     Field // rre
	RWE                     Field // rwe
	RAE                     Field // rae
	PageOffset              Field // page_offset
	CDSlaveReceive          Field // cd_slave_receive
	CDSlaveSend             Field // cd_slave_send
	CDMaster                Field // cd_master
	MinRNRNak               Field // min_rnr_nak
	NextRcvPSN              Field // next_rcv_psn
	XRCD                    Field // xrcd
	CQNRcv                  Field // cqn_rcv
	DBRAddr                 Field // dbr_addr
	QKey                    Field // q_key
	RQType                  Field // rq_type
	SRQNRMPNXRQN            Field // srqn_rmpn_xrqn
	RMSN                    Field // rmsn
	HWSQWQEBBCounter        Field // hw_sq_wqebb_counter
	SWSQWQEBBCounter        Field // sw_sq_wqebb_counter
	HWRQCounter             Field // hw_rq_counter
	SWRQCounter             Field // sw_rq_counter
	CGS                     Field // cgs
	CSReq                   Field // cs_req
	CSRes                   Field // cs_res
	DCAccessKey             Field // dc_access_key
	DBRUMEMValid            Field // dbr_umem_valid
	DBRUMEMID               Field // dbr_umem_id
}{
	State:                   F(0x000, 4),
	LAGTXPortAffinity:       F(0x004, 4),
	ST:                      F(0x008, 8),
	IsolateVLTC:             F(0x012, 1),
	PMState:                 F(0x013, 2),
	ReqE2ECreditMode:        F(0x016, 2),
	OffloadType:             F(0x018, 4),
	EndPaddingMode:          F(0x01c, 2),
	WQSignature:             F(0x020, 1),
	BlockLBMC:               F(0x021, 1),
	AtomicLikeWriteEn:       F(0x022, 1),
	LatencySensitive:        F(0x023, 1),
	DrainSigErr:             F(0x025, 1),
	PD:                      F(0x028, 24),
	MTU:                     F(0x040, 3),
	LogMsgMax:               F(0x043, 5),
	LogRQSize:               F(0x049, 4),
	LogRQStride:             F(0x04d, 3),
	NoSQ:                    F(0x050, 1),
	LogSQSize:               F(0x051, 4),
	TSFormat:                F(0x058, 2),
	DataInOrder:             F(0x05a, 1),
	RLKY:                    F(0x05b, 1),
	ULPStatelessOffloadMode: F(0x05c, 4),
	CounterSetID:            F(0x060, 8),
	UARPage:                 F(0x068, 24),
	SendDBRMode:             F(0x080, 2),
	UserIndex:               F(0x088, 24),
	LogPageSize:             F(0x0a3, 5),
	RemoteQPN:               F(0x0a8, 24),
	LogAckReqFreq:           F(0x380, 4),
	LogSRAMax:               F(0x388, 3),
	RetryCount:              F(0x38d, 3),
	RNRRetry:                F(0x390, 3),
	FRE:                     F(0x394, 1),
	CurRNRRetry:             F(0x395, 3),
	CurRetryCount:           F(0x398, 3),
	NextSendPSN:             F(0x3c8, 24),
	CQNSnd:                  F(0x3e8, 24),
	DETHSQPN:                F(0x408, 24),
	LastAckedPSN:            F(0x448, 24),
	SSN:                     F(0x468, 24),
	LogRRAMax:               F(0x488, 3),
	AtomicMode:              F(0x48c, 4),
	RRE:                     F(0x490, 1),
	RWE:                     F(0x491, 1),
	RAE:                     F(0x492, 1),
	PageOffset:              F(0x494, 6),
	CDSlaveReceive:          F(0x49d, 1),
	CDSlaveSend:             F(0x49e, 1),
	CDMaster:                F(0x49f, 1),
	MinRNRNak:               F(0x4a3, 5),
	NextRcvPSN:              F(0x4a8, 24),
	XRCD:                    F(0x4c8, 24),
	CQNRcv:                  F(0x4e8, 24),
	DBRAddr:                 F(0x500, 64),
	QKey:                    F(0x540, 32),
	RQType:                  F(0x565, 3),
	SRQNRMPNXRQN:            F(0x568, 24),
	RMSN:                    F(0x588, 24),
	HWSQWQEBBCounter:        F(0x5a0, 16),
	SWSQWQEBBCounter:        F(0x5b0, 16),
	HWRQCounter:             F(0x5c0, 32),
	SWRQCounter:             F(0x5e0, 32),
	CGS:                     F(0x62f, 1),
	CSReq:                   F(0x630, 8),
	CSRes:                   F(0x638, 8),
	DCAccessKey:             F(0x640, 64),
	DBRUMEMValid:            F(0x683, 1),
	DBRUMEMID:               F(0x720, 32),
}

// QPContext is the whole qpc, including the fields only QUERY_QP reports
// (state, counters). The builders write every member; unset members are zero.
type QPContext struct {
	State                   QPState     // state
	LAGTXPortAffinity       uint8       // lag_tx_port_affinity
	ST                      ServiceType // st
	IsolateVLTC             bool        // isolate_vl_tc
	PMState                 PMState     // pm_state
	ReqE2ECreditMode        uint8       // req_e2e_credit_mode
	OffloadType             uint8       // offload_type
	EndPaddingMode          uint8       // end_padding_mode
	WQSignature             bool        // wq_signature
	BlockLBMC               bool        // block_lb_mc
	AtomicLikeWriteEn       bool        // atomic_like_write_en
	LatencySensitive        bool        // latency_sensitive
	DrainSigErr             bool        // drain_sigerr
	PD                      uint32      // pd
	MTU                     MTU         // mtu
	LogMsgMax               uint8       // log_msg_max
	LogRQSize               uint8       // log_rq_size
	LogRQStride             uint8       // log_rq_stride
	NoSQ                    bool        // no_sq
	LogSQSize               uint8       // log_sq_size
	TSFormat                TSFormat    // ts_format
	DataInOrder             bool        // data_in_order
	RLKY                    bool        // rlky
	ULPStatelessOffloadMode uint8       // ulp_stateless_offload_mode
	CounterSetID            uint8       // counter_set_id
	UARPage                 uint32      // uar_page
	SendDBRMode             SendDBRMode // send_dbr_mode
	UserIndex               uint32      // user_index
	LogPageSize             uint8       // log_page_size
	RemoteQPN               uint32      // remote_qpn
	PrimaryAddressPath      AddressPath // primary_address_path
	SecondaryAddressPath    AddressPath // secondary_address_path
	LogAckReqFreq           uint8       // log_ack_req_freq
	LogSRAMax               uint8       // log_sra_max
	RetryCount              uint8       // retry_count
	RNRRetry                uint8       // rnr_retry
	FRE                     bool        // fre
	CurRNRRetry             uint8       // cur_rnr_retry
	CurRetryCount           uint8       // cur_retry_count
	NextSendPSN             uint32      // next_send_psn
	CQNSnd                  uint32      // cqn_snd
	DETHSQPN                uint32      // deth_sqpn
	LastAckedPSN            uint32      // last_acked_psn
	SSN                     uint32      // ssn
	LogRRAMax               uint8       // log_rra_max
	AtomicMode              AtomicMode  // atomic_mode
	RRE                     bool        // rre
	RWE                     bool        // rwe
	RAE                     bool        // rae
	PageOffset              uint8       // page_offset
	CDSlaveReceive          bool        // cd_slave_receive
	CDSlaveSend             bool        // cd_slave_send
	CDMaster                bool        // cd_master
	MinRNRNak               uint8       // min_rnr_nak
	NextRcvPSN              uint32      // next_rcv_psn
	XRCD                    uint32      // xrcd
	CQNRcv                  uint32      // cqn_rcv
	DBRAddr                 uint64      // dbr_addr
	QKey                    uint32      // q_key
	RQType                  RQType      // rq_type
	SRQNRMPNXRQN            uint32      // srqn_rmpn_xrqn
	RMSN                    uint32      // rmsn
	HWSQWQEBBCounter        uint16      // hw_sq_wqebb_counter
	SWSQWQEBBCounter        uint16      // sw_sq_wqebb_counter
	HWRQCounter             uint32      // hw_rq_counter
	SWRQCounter             uint32      // sw_rq_counter
	CGS                     bool        // cgs
	CSReq                   uint8       // cs_req
	CSRes                   uint8       // cs_res
	DCAccessKey             uint64      // dc_access_key
	DBRUMEMValid            bool        // dbr_umem_valid
	DBRUMEMID               uint32      // dbr_umem_id
}

func (x *QPContext) ownBindings() []binding {
	return []binding{
		bindUint("state", QPCFields.State, &x.State),
		bindUint("lag_tx_port_affinity", QPCFields.LAGTXPortAffinity, &x.LAGTXPortAffinity),
		bindUint("st", QPCFields.ST, &x.ST),
		bindBool("isolate_vl_tc", QPCFields.IsolateVLTC, &x.IsolateVLTC),
		bindUint("pm_state", QPCFields.PMState, &x.PMState),
		bindUint("req_e2e_credit_mode", QPCFields.ReqE2ECreditMode, &x.ReqE2ECreditMode),
		bindUint("offload_type", QPCFields.OffloadType, &x.OffloadType),
		bindUint("end_padding_mode", QPCFields.EndPaddingMode, &x.EndPaddingMode),
		bindBool("wq_signature", QPCFields.WQSignature, &x.WQSignature),
		bindBool("block_lb_mc", QPCFields.BlockLBMC, &x.BlockLBMC),
		bindBool("atomic_like_write_en", QPCFields.AtomicLikeWriteEn, &x.AtomicLikeWriteEn),
		bindBool("latency_sensitive", QPCFields.LatencySensitive, &x.LatencySensitive),
		bindBool("drain_sigerr", QPCFields.DrainSigErr, &x.DrainSigErr),
		bindUint("pd", QPCFields.PD, &x.PD),
		bindUint("mtu", QPCFields.MTU, &x.MTU),
		bindUint("log_msg_max", QPCFields.LogMsgMax, &x.LogMsgMax),
		bindUint("log_rq_size", QPCFields.LogRQSize, &x.LogRQSize),
		bindUint("log_rq_stride", QPCFields.LogRQStride, &x.LogRQStride),
		bindBool("no_sq", QPCFields.NoSQ, &x.NoSQ),
		bindUint("log_sq_size", QPCFields.LogSQSize, &x.LogSQSize),
		bindUint("ts_format", QPCFields.TSFormat, &x.TSFormat),
		bindBool("data_in_order", QPCFields.DataInOrder, &x.DataInOrder),
		bindBool("rlky", QPCFields.RLKY, &x.RLKY),
		bindUint("ulp_stateless_offload_mode", QPCFields.ULPStatelessOffloadMode, &x.ULPStatelessOffloadMode),
		bindUint("counter_set_id", QPCFields.CounterSetID, &x.CounterSetID),
		bindUint("uar_page", QPCFields.UARPage, &x.UARPage),
		bindUint("send_dbr_mode", QPCFields.SendDBRMode, &x.SendDBRMode),
		bindUint("user_index", QPCFields.UserIndex, &x.UserIndex),
		bindUint("log_page_size", QPCFields.LogPageSize, &x.LogPageSize),
		bindUint("remote_qpn", QPCFields.RemoteQPN, &x.RemoteQPN),
		bindUint("log_ack_req_freq", QPCFields.LogAckReqFreq, &x.LogAckReqFreq),
		bindUint("log_sra_max", QPCFields.LogSRAMax, &x.LogSRAMax),
		bindUint("retry_count", QPCFields.RetryCount, &x.RetryCount),
		bindUint("rnr_retry", QPCFields.RNRRetry, &x.RNRRetry),
		bindBool("fre", QPCFields.FRE, &x.FRE),
		bindUint("cur_rnr_retry", QPCFields.CurRNRRetry, &x.CurRNRRetry),
		bindUint("cur_retry_count", QPCFields.CurRetryCount, &x.CurRetryCount),
		bindUint("next_send_psn", QPCFields.NextSendPSN, &x.NextSendPSN),
		bindUint("cqn_snd", QPCFields.CQNSnd, &x.CQNSnd),
		bindUint("deth_sqpn", QPCFields.DETHSQPN, &x.DETHSQPN),
		bindUint("last_acked_psn", QPCFields.LastAckedPSN, &x.LastAckedPSN),
		bindUint("ssn", QPCFields.SSN, &x.SSN),
		bindUint("log_rra_max", QPCFields.LogRRAMax, &x.LogRRAMax),
		bindUint("atomic_mode", QPCFields.AtomicMode, &x.AtomicMode),
		bindBool("rre", QPCFields.RRE, &x.RRE),
		bindBool("rwe", QPCFields.RWE, &x.RWE),
		bindBool("rae", QPCFields.RAE, &x.RAE),
		bindUint("page_offset", QPCFields.PageOffset, &x.PageOffset),
		bindBool("cd_slave_receive", QPCFields.CDSlaveReceive, &x.CDSlaveReceive),
		bindBool("cd_slave_send", QPCFields.CDSlaveSend, &x.CDSlaveSend),
		bindBool("cd_master", QPCFields.CDMaster, &x.CDMaster),
		bindUint("min_rnr_nak", QPCFields.MinRNRNak, &x.MinRNRNak),
		bindUint("next_rcv_psn", QPCFields.NextRcvPSN, &x.NextRcvPSN),
		bindUint("xrcd", QPCFields.XRCD, &x.XRCD),
		bindUint("cqn_rcv", QPCFields.CQNRcv, &x.CQNRcv),
		bindUint("dbr_addr", QPCFields.DBRAddr, &x.DBRAddr),
		bindUint("q_key", QPCFields.QKey, &x.QKey),
		bindUint("rq_type", QPCFields.RQType, &x.RQType),
		bindUint("srqn_rmpn_xrqn", QPCFields.SRQNRMPNXRQN, &x.SRQNRMPNXRQN),
		bindUint("rmsn", QPCFields.RMSN, &x.RMSN),
		bindUint("hw_sq_wqebb_counter", QPCFields.HWSQWQEBBCounter, &x.HWSQWQEBBCounter),
		bindUint("sw_sq_wqebb_counter", QPCFields.SWSQWQEBBCounter, &x.SWSQWQEBBCounter),
		bindUint("hw_rq_counter", QPCFields.HWRQCounter, &x.HWRQCounter),
		bindUint("sw_rq_counter", QPCFields.SWRQCounter, &x.SWRQCounter),
		bindBool("cgs", QPCFields.CGS, &x.CGS),
		bindUint("cs_req", QPCFields.CSReq, &x.CSReq),
		bindUint("cs_res", QPCFields.CSRes, &x.CSRes),
		bindUint("dc_access_key", QPCFields.DCAccessKey, &x.DCAccessKey),
		bindBool("dbr_umem_valid", QPCFields.DBRUMEMValid, &x.DBRUMEMValid),
		bindUint("dbr_umem_id", QPCFields.DBRUMEMID, &x.DBRUMEMID),
	}
}

// Encode writes the address path into b (at least 44 bytes). A value that
// does not fit its field is an error and leaves b untouched.
func (x AddressPath) Encode(b []byte) error {
	return encodeFields("encode ads", b, ADSLen, x.bindings())
}

// DecodeAddressPath reads an address path from b (at least 44 bytes).
func DecodeAddressPath(b []byte) (AddressPath, error) {
	var x AddressPath
	err := decodeFields("decode ads", b, ADSLen, x.bindings())
	return x, err
}

func (x *QPContext) bindings() []binding {
	bs := x.ownBindings()
	bs = append(bs, nest("primary_address_path", QPCPrimaryPathBit, x.PrimaryAddressPath.bindings())...)
	bs = append(bs, nest("secondary_address_path", QPCSecondaryPathBit, x.SecondaryAddressPath.bindings())...)
	return bs
}

// Encode writes the qpc into b (at least 232 bytes). A value that does not
// fit its field is an error and leaves b untouched.
func (x QPContext) Encode(b []byte) error {
	return encodeFields("encode qpc", b, QPCLen, x.bindings())
}

// DecodeQPContext reads a qpc from b (at least 232 bytes).
func DecodeQPContext(b []byte) (QPContext, error) {
	var x QPContext
	err := decodeFields("decode qpc", b, QPCLen, x.bindings())
	return x, err
}

// QPCFieldNames lists every qpc field name the library knows, in layout
// order; address-path members are "primary_address_path.<name>" and
// "secondary_address_path.<name>". These are the names TransitionFields and
// CopyFields use.
func QPCFieldNames() []string {
	var x QPContext
	bs := x.bindings()
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = b.name
	}
	return names
}

// CopyFields copies the named qpc fields (QPCFieldNames spelling) from src
// into x; a field name that does not exist is an ErrInvalid error and
// nothing is copied. The emulator applies a transition with it: the
// required fields plus the optional fields whose mask bit is set.
func (x *QPContext) CopyFields(src *QPContext, names []string) error {
	dst, from := x.bindings(), src.bindings()
	type pair struct{ d, s binding }
	pairs := make([]pair, 0, len(names))
	for _, n := range names {
		d, ok := findBinding(dst, n)
		if !ok {
			return &LayoutError{Op: "copy qpc fields", Field: n, Err: ErrInvalid, Detail: "no such qpc field"}
		}
		s, _ := findBinding(from, n)
		pairs = append(pairs, pair{d, s})
	}
	for _, p := range pairs {
		if p.d.raw != nil {
			copy(p.d.raw, p.s.raw)
			continue
		}
		p.d.set(p.s.get())
	}
	return nil
}
