package mlx5

import "fmt"

// QUERY_HCA_CAP (0x100) and the capability structures it
// returns: general caps (type 0), atomic caps (type 3) and general caps 2
// (type 0x20) here; RoCE caps (type 4) in roce.go.

// Sizes and positions of the QUERY_HCA_CAP layouts.
const (
	QueryHCACapInLen  = 16
	QueryHCACapOutLen = 4112
	// CapUnionLen is the capability union at byte 16 of the output.
	CapUnionLen = 4096
	// CapLen is the part of the union the capability types used here
	// populate; the typed structures encode and decode this many bytes.
	CapLen = 256
	// CapMailboxBit is the position of the capability in the output.
	CapMailboxBit  = 0x80
	capMailboxByte = CapMailboxBit / 8
)

// CapType is the capability type of QUERY_HCA_CAP (op_mod bits 15:1).
type CapType uint8

const (
	CapGeneral  CapType = 0x00
	CapAtomic   CapType = 0x03
	CapRoCE     CapType = 0x04
	CapGeneral2 CapType = 0x20
)

var capTypeNames = map[uint8]string{0x00: "GENERAL", 0x03: "ATOMIC", 0x04: "ROCE", 0x20: "GENERAL_2"}

func (t CapType) String() string { return enumString(capTypeNames, "CAP_TYPE", uint8(t)) }

// HCACapOpMod returns op_mod = cap_type<<1 | current.
func HCACapOpMod(t CapType, current bool) uint16 {
	m := uint16(t) << 1
	if current {
		m |= 1
	}
	return m
}

// Port types of HCACaps.PortType.
const (
	PortTypeIB  = 0
	PortTypeETH = 1
)

// AtomicCaps.AtomicOperations bits.
const (
	AtomicOpCmpSwap          = 1 << 0
	AtomicOpFetchAdd         = 1 << 1
	AtomicOpMaskedCmpSwap    = 1 << 2
	AtomicOpMaskedFetchAdd   = 1 << 3
	AtomicSize4B             = 1 << 2 // AtomicSizeQP/DC bit for 4-byte operands
	AtomicSize8B             = 1 << 3 // ... and for 8-byte operands
	AtomicEndiannessBig      = 0      // atomic_req_8B_endianness_mode: IB-spec
	AtomicEndiannessHostMode = 1      // host byte order
)

// HCACapFields is the bit layout of HCACaps, relative to the start of the structure.
var HCACapFields = struct {
	HCACap2              Field // hca_cap_2
	VHCAID               Field // vhca_id
	QPDataInOrder        Field // qp_data_in_order
	LogMaxSRQSz          Field // log_max_srq_sz
	LogMaxQPSz           Field // log_max_qp_sz
	LogMaxQP             Field // log_max_qp
	LogMaxCQSz           Field // log_max_cq_sz
	LogMaxCQ             Field // log_max_cq
	RelaxedOrderingWrite Field // relaxed_ordering_write
	LogMaxMKey           Field // log_max_mkey
	LogMaxEQ             Field // log_max_eq
	LogMaxRAReqQP        Field // log_max_ra_req_qp
	RTS2RTSQPUDPSport    Field // rts2rts_qp_udp_sport
	LogMaxRAResQP        Field // log_max_ra_res_qp
	RTS2RTSQPDSCP        Field // rts2rts_qp_dscp
	GIDTableSize         Field // gid_table_size
	PKeyTableSize        Field // pkey_table_size
	LocalCAAckDelay      Field // local_ca_ack_delay
	PortType             Field // port_type
	NumPorts             Field // num_ports
	LogMaxMsg            Field // log_max_msg
	CQEVersion           Field // cqe_version
	RoCE                 Field // roce
	Atomic               Field // atomic
	CQOI                 Field // cq_oi
	CQResize             Field // cq_resize
	CQModeration         Field // cq_moderation
	CD                   Field // cd
	XRC                  Field // xrc
	UD                   Field // ud
	UC                   Field // uc
	RC                   Field // rc
	UAR4K                Field // uar_4k
	UARSz                Field // uar_sz
	UMEMUID0             Field // umem_uid_0
	LogPgSz              Field // log_pg_sz
	BF                   Field // bf
	LogBFRegSize         Field // log_bf_reg_size
	MaxWQESzSQ           Field // max_wqe_sz_sq
	MaxWQESzRQ           Field // max_wqe_sz_rq
	LogMaxPD             Field // log_max_pd
	GeneralObjTypes      Field // general_obj_types
	SQTSFormat           Field // sq_ts_format
	RQTSFormat           Field // rq_ts_format
	LogMaxUCtx           Field // log_max_uctx
	LogMaxUMEM           Field // log_max_umem
	MaxNumEQs            Field // max_num_eqs
	LogUARPageSz         Field // log_uar_page_sz
	DeviceFrequencyKHz   Field // device_frequency_khz
	NumOfUARsPerPage     Field // num_of_uars_per_page
	LogMaxAtomicSizeQP   Field // log_max_atomic_size_qp
	CQE128Always         Field // cqe_128_always
	WaitOnData           Field // wait_on_data
	WaitOnTime           Field // wait_on_time
}{
	HCACap2:              F(0x020, 1),
	VHCAID:               F(0x030, 16),
	QPDataInOrder:        F(0x062, 1),
	LogMaxSRQSz:          F(0x080, 8),
	LogMaxQPSz:           F(0x088, 8),
	LogMaxQP:             F(0x09b, 5),
	LogMaxCQSz:           F(0x0c8, 8),
	LogMaxCQ:             F(0x0db, 5),
	RelaxedOrderingWrite: F(0x0e8, 1),
	LogMaxMKey:           F(0x0ea, 6),
	LogMaxEQ:             F(0x0fc, 4),
	LogMaxRAReqQP:        F(0x14a, 6),
	RTS2RTSQPUDPSport:    F(0x151, 1),
	LogMaxRAResQP:        F(0x15a, 6),
	RTS2RTSQPDSCP:        F(0x16a, 1),
	GIDTableSize:         F(0x170, 16),
	PKeyTableSize:        F(0x190, 16),
	LocalCAAckDelay:      F(0x1ab, 5),
	PortType:             F(0x1b6, 2),
	NumPorts:             F(0x1b8, 8),
	LogMaxMsg:            F(0x1c3, 5),
	CQEVersion:           F(0x1fc, 4),
	RoCE:                 F(0x21d, 1),
	Atomic:               F(0x21e, 1),
	CQOI:                 F(0x220, 1),
	CQResize:             F(0x221, 1),
	CQModeration:         F(0x222, 1),
	CD:                   F(0x22c, 1),
	XRC:                  F(0x23c, 1),
	UD:                   F(0x23d, 1),
	UC:                   F(0x23e, 1),
	RC:                   F(0x23f, 1),
	UAR4K:                F(0x240, 1),
	UARSz:                F(0x24a, 6),
	UMEMUID0:             F(0x252, 1),
	LogPgSz:              F(0x258, 8),
	BF:                   F(0x260, 1),
	LogBFRegSize:         F(0x26b, 5),
	MaxWQESzSQ:           F(0x290, 16),
	MaxWQESzRQ:           F(0x2b0, 16),
	LogMaxPD:             F(0x32b, 5),
	GeneralObjTypes:      F(0x400, 64),
	SQTSFormat:           F(0x440, 2),
	RQTSFormat:           F(0x442, 2),
	LogMaxUCtx:           F(0x463, 5),
	LogMaxUMEM:           F(0x46b, 5),
	MaxNumEQs:            F(0x470, 16),
	LogUARPageSz:         F(0x490, 16),
	DeviceFrequencyKHz:   F(0x4e0, 32),
	NumOfUARsPerPage:     F(0x520, 32),
	LogMaxAtomicSizeQP:   F(0x580, 8),
	CQE128Always:         F(0x5bd, 1),
	WaitOnData:           F(0x68b, 1),
	WaitOnTime:           F(0x68c, 1),
}

// HCACaps is the general device capability structure (cmd_hca_cap, cap type
// 0), the fields the library and the emulator use.
type HCACaps struct {
	HCACap2              bool   // hca_cap_2
	VHCAID               uint16 // vhca_id
	QPDataInOrder        bool   // qp_data_in_order
	LogMaxSRQSz          uint8  // log_max_srq_sz
	LogMaxQPSz           uint8  // log_max_qp_sz
	LogMaxQP             uint8  // log_max_qp
	LogMaxCQSz           uint8  // log_max_cq_sz
	LogMaxCQ             uint8  // log_max_cq
	RelaxedOrderingWrite bool   // relaxed_ordering_write
	LogMaxMKey           uint8  // log_max_mkey
	LogMaxEQ             uint8  // log_max_eq
	LogMaxRAReqQP        uint8  // log_max_ra_req_qp
	RTS2RTSQPUDPSport    bool   // rts2rts_qp_udp_sport
	LogMaxRAResQP        uint8  // log_max_ra_res_qp
	RTS2RTSQPDSCP        bool   // rts2rts_qp_dscp
	GIDTableSize         uint16 // gid_table_size
	PKeyTableSize        uint16 // pkey_table_size
	LocalCAAckDelay      uint8  // local_ca_ack_delay
	PortType             uint8  // port_type
	NumPorts             uint8  // num_ports
	LogMaxMsg            uint8  // log_max_msg
	CQEVersion           uint8  // cqe_version
	RoCE                 bool   // roce
	Atomic               bool   // atomic
	CQOI                 bool   // cq_oi
	CQResize             bool   // cq_resize
	CQModeration         bool   // cq_moderation
	CD                   bool   // cd
	XRC                  bool   // xrc
	UD                   bool   // ud
	UC                   bool   // uc
	RC                   bool   // rc
	UAR4K                bool   // uar_4k
	UARSz                uint8  // uar_sz
	UMEMUID0             bool   // umem_uid_0
	LogPgSz              uint8  // log_pg_sz
	BF                   bool   // bf
	LogBFRegSize         uint8  // log_bf_reg_size
	MaxWQESzSQ           uint16 // max_wqe_sz_sq
	MaxWQESzRQ           uint16 // max_wqe_sz_rq
	LogMaxPD             uint8  // log_max_pd
	GeneralObjTypes      uint64 // general_obj_types
	SQTSFormat           uint8  // sq_ts_format
	RQTSFormat           uint8  // rq_ts_format
	LogMaxUCtx           uint8  // log_max_uctx
	LogMaxUMEM           uint8  // log_max_umem
	MaxNumEQs            uint16 // max_num_eqs
	LogUARPageSz         uint16 // log_uar_page_sz
	DeviceFrequencyKHz   uint32 // device_frequency_khz
	NumOfUARsPerPage     uint32 // num_of_uars_per_page
	LogMaxAtomicSizeQP   uint8  // log_max_atomic_size_qp
	CQE128Always         bool   // cqe_128_always
	WaitOnData           bool   // wait_on_data
	WaitOnTime           bool   // wait_on_time
}

func (x *HCACaps) bindings() []binding {
	return []binding{
		bindBool("hca_cap_2", HCACapFields.HCACap2, &x.HCACap2),
		bindUint("vhca_id", HCACapFields.VHCAID, &x.VHCAID),
		bindBool("qp_data_in_order", HCACapFields.QPDataInOrder, &x.QPDataInOrder),
		bindUint("log_max_srq_sz", HCACapFields.LogMaxSRQSz, &x.LogMaxSRQSz),
		bindUint("log_max_qp_sz", HCACapFields.LogMaxQPSz, &x.LogMaxQPSz),
		bindUint("log_max_qp", HCACapFields.LogMaxQP, &x.LogMaxQP),
		bindUint("log_max_cq_sz", HCACapFields.LogMaxCQSz, &x.LogMaxCQSz),
		bindUint("log_max_cq", HCACapFields.LogMaxCQ, &x.LogMaxCQ),
		bindBool("relaxed_ordering_write", HCACapFields.RelaxedOrderingWrite, &x.RelaxedOrderingWrite),
		bindUint("log_max_mkey", HCACapFields.LogMaxMKey, &x.LogMaxMKey),
		bindUint("log_max_eq", HCACapFields.LogMaxEQ, &x.LogMaxEQ),
		bindUint("log_max_ra_req_qp", HCACapFields.LogMaxRAReqQP, &x.LogMaxRAReqQP),
		bindBool("rts2rts_qp_udp_sport", HCACapFields.RTS2RTSQPUDPSport, &x.RTS2RTSQPUDPSport),
		bindUint("log_max_ra_res_qp", HCACapFields.LogMaxRAResQP, &x.LogMaxRAResQP),
		bindBool("rts2rts_qp_dscp", HCACapFields.RTS2RTSQPDSCP, &x.RTS2RTSQPDSCP),
		bindUint("gid_table_size", HCACapFields.GIDTableSize, &x.GIDTableSize),
		bindUint("pkey_table_size", HCACapFields.PKeyTableSize, &x.PKeyTableSize),
		bindUint("local_ca_ack_delay", HCACapFields.LocalCAAckDelay, &x.LocalCAAckDelay),
		bindUint("port_type", HCACapFields.PortType, &x.PortType),
		bindUint("num_ports", HCACapFields.NumPorts, &x.NumPorts),
		bindUint("log_max_msg", HCACapFields.LogMaxMsg, &x.LogMaxMsg),
		bindUint("cqe_version", HCACapFields.CQEVersion, &x.CQEVersion),
		bindBool("roce", HCACapFields.RoCE, &x.RoCE),
		bindBool("atomic", HCACapFields.Atomic, &x.Atomic),
		bindBool("cq_oi", HCACapFields.CQOI, &x.CQOI),
		bindBool("cq_resize", HCACapFields.CQResize, &x.CQResize),
		bindBool("cq_moderation", HCACapFields.CQModeration, &x.CQModeration),
		bindBool("cd", HCACapFields.CD, &x.CD),
		bindBool("xrc", HCACapFields.XRC, &x.XRC),
		bindBool("ud", HCACapFields.UD, &x.UD),
		bindBool("uc", HCACapFields.UC, &x.UC),
		bindBool("rc", HCACapFields.RC, &x.RC),
		bindBool("uar_4k", HCACapFields.UAR4K, &x.UAR4K),
		bindUint("uar_sz", HCACapFields.UARSz, &x.UARSz),
		bindBool("umem_uid_0", HCACapFields.UMEMUID0, &x.UMEMUID0),
		bindUint("log_pg_sz", HCACapFields.LogPgSz, &x.LogPgSz),
		bindBool("bf", HCACapFields.BF, &x.BF),
		bindUint("log_bf_reg_size", HCACapFields.LogBFRegSize, &x.LogBFRegSize),
		bindUint("max_wqe_sz_sq", HCACapFields.MaxWQESzSQ, &x.MaxWQESzSQ),
		bindUint("max_wqe_sz_rq", HCACapFields.MaxWQESzRQ, &x.MaxWQESzRQ),
		bindUint("log_max_pd", HCACapFields.LogMaxPD, &x.LogMaxPD),
		bindUint("general_obj_types", HCACapFields.GeneralObjTypes, &x.GeneralObjTypes),
		bindUint("sq_ts_format", HCACapFields.SQTSFormat, &x.SQTSFormat),
		bindUint("rq_ts_format", HCACapFields.RQTSFormat, &x.RQTSFormat),
		bindUint("log_max_uctx", HCACapFields.LogMaxUCtx, &x.LogMaxUCtx),
		bindUint("log_max_umem", HCACapFields.LogMaxUMEM, &x.LogMaxUMEM),
		bindUint("max_num_eqs", HCACapFields.MaxNumEQs, &x.MaxNumEQs),
		bindUint("log_uar_page_sz", HCACapFields.LogUARPageSz, &x.LogUARPageSz),
		bindUint("device_frequency_khz", HCACapFields.DeviceFrequencyKHz, &x.DeviceFrequencyKHz),
		bindUint("num_of_uars_per_page", HCACapFields.NumOfUARsPerPage, &x.NumOfUARsPerPage),
		bindUint("log_max_atomic_size_qp", HCACapFields.LogMaxAtomicSizeQP, &x.LogMaxAtomicSizeQP),
		bindBool("cqe_128_always", HCACapFields.CQE128Always, &x.CQE128Always),
		bindBool("wait_on_data", HCACapFields.WaitOnData, &x.WaitOnData),
		bindBool("wait_on_time", HCACapFields.WaitOnTime, &x.WaitOnTime),
	}
}

// AtomicCapFields is the bit layout of AtomicCaps, relative to the start of the structure.
var AtomicCapFields = struct {
	AtomicReq8BEndiannessMode           Field // atomic_req_8B_endianness_mode
	SupportedAtomicReq8BEndiannessMode1 Field // supported_atomic_req_8B_endianness_mode_1
	AtomicOperations                    Field // atomic_operations
	AtomicSizeQP                        Field // atomic_size_qp
	AtomicSizeDC                        Field // atomic_size_dc
	FetchAddPCIAtomic                   Field // fetch_add_pci_atomic
	SwapPCIAtomic                       Field // swap_pci_atomic
	CompareSwapPCIAtomic                Field // compare_swap_pci_atomic
}{
	AtomicReq8BEndiannessMode:           F(0x040, 2),
	SupportedAtomicReq8BEndiannessMode1: F(0x046, 1),
	AtomicOperations:                    F(0x090, 16),
	AtomicSizeQP:                        F(0x0b0, 16),
	AtomicSizeDC:                        F(0x0d0, 16),
	FetchAddPCIAtomic:                   F(0x280, 16),
	SwapPCIAtomic:                       F(0x290, 16),
	CompareSwapPCIAtomic:                F(0x2a0, 16),
}

// AtomicCaps is the atomic capability structure (atomic_caps, cap type 3).
// AtomicOperations is a mask of AtomicOp* bits; AtomicSizeQP/DC have bit n
// set when 2^n-byte operands are supported.
type AtomicCaps struct {
	AtomicReq8BEndiannessMode           uint8  // atomic_req_8B_endianness_mode
	SupportedAtomicReq8BEndiannessMode1 bool   // supported_atomic_req_8B_endianness_mode_1
	AtomicOperations                    uint16 // atomic_operations
	AtomicSizeQP                        uint16 // atomic_size_qp
	AtomicSizeDC                        uint16 // atomic_size_dc
	FetchAddPCIAtomic                   uint16 // fetch_add_pci_atomic
	SwapPCIAtomic                       uint16 // swap_pci_atomic
	CompareSwapPCIAtomic                uint16 // compare_swap_pci_atomic
}

func (x *AtomicCaps) bindings() []binding {
	return []binding{
		bindUint("atomic_req_8B_endianness_mode", AtomicCapFields.AtomicReq8BEndiannessMode, &x.AtomicReq8BEndiannessMode),
		bindBool("supported_atomic_req_8B_endianness_mode_1", AtomicCapFields.SupportedAtomicReq8BEndiannessMode1, &x.SupportedAtomicReq8BEndiannessMode1),
		bindUint("atomic_operations", AtomicCapFields.AtomicOperations, &x.AtomicOperations),
		bindUint("atomic_size_qp", AtomicCapFields.AtomicSizeQP, &x.AtomicSizeQP),
		bindUint("atomic_size_dc", AtomicCapFields.AtomicSizeDC, &x.AtomicSizeDC),
		bindUint("fetch_add_pci_atomic", AtomicCapFields.FetchAddPCIAtomic, &x.FetchAddPCIAtomic),
		bindUint("swap_pci_atomic", AtomicCapFields.SwapPCIAtomic, &x.SwapPCIAtomic),
		bindUint("compare_swap_pci_atomic", AtomicCapFields.CompareSwapPCIAtomic, &x.CompareSwapPCIAtomic),
	}
}

// HCACap2Fields is the bit layout of HCACaps2, relative to the start of the structure.
var HCACap2Fields = struct {
	SendDBRModeNoDBRInt   Field // send_dbr_mode_no_dbr_int
	SendDBRModeNoDBRExt   Field // send_dbr_mode_no_dbr_ext
	LogMaxSendDBRLessQPSQ Field // log_max_send_dbr_less_qp_sq
}{
	SendDBRModeNoDBRInt:   F(0x2e0, 1),
	SendDBRModeNoDBRExt:   F(0x2e1, 1),
	LogMaxSendDBRLessQPSQ: F(0x2e3, 5),
}

// HCACaps2 is the general device capability structure 2 (cmd_hca_cap_2,
// cap type 0x20): the doorbell-record-less SQ modes.
type HCACaps2 struct {
	SendDBRModeNoDBRInt   bool  // send_dbr_mode_no_dbr_int
	SendDBRModeNoDBRExt   bool  // send_dbr_mode_no_dbr_ext
	LogMaxSendDBRLessQPSQ uint8 // log_max_send_dbr_less_qp_sq
}

func (x *HCACaps2) bindings() []binding {
	return []binding{
		bindBool("send_dbr_mode_no_dbr_int", HCACap2Fields.SendDBRModeNoDBRInt, &x.SendDBRModeNoDBRInt),
		bindBool("send_dbr_mode_no_dbr_ext", HCACap2Fields.SendDBRModeNoDBRExt, &x.SendDBRModeNoDBRExt),
		bindUint("log_max_send_dbr_less_qp_sq", HCACap2Fields.LogMaxSendDBRLessQPSQ, &x.LogMaxSendDBRLessQPSQ),
	}
}

// Encode writes the general caps into b (at least CapLen bytes).
func (x HCACaps) Encode(b []byte) error {
	return encodeFields("encode cmd_hca_cap", b, CapLen, x.bindings())
}

// DecodeHCACaps reads general caps from b (at least CapLen bytes).
func DecodeHCACaps(b []byte) (HCACaps, error) {
	var x HCACaps
	err := decodeFields("decode cmd_hca_cap", b, CapLen, x.bindings())
	return x, err
}

// CapType reports the capability type of the structure.
func (HCACaps) CapType() CapType { return CapGeneral }

// Encode writes the atomic caps into b (at least CapLen bytes).
func (x AtomicCaps) Encode(b []byte) error {
	return encodeFields("encode atomic_caps", b, CapLen, x.bindings())
}

// DecodeAtomicCaps reads atomic caps from b (at least CapLen bytes).
func DecodeAtomicCaps(b []byte) (AtomicCaps, error) {
	var x AtomicCaps
	err := decodeFields("decode atomic_caps", b, CapLen, x.bindings())
	return x, err
}

// CapType reports the capability type of the structure.
func (AtomicCaps) CapType() CapType { return CapAtomic }

// Encode writes general caps 2 into b (at least CapLen bytes).
func (x HCACaps2) Encode(b []byte) error {
	return encodeFields("encode cmd_hca_cap_2", b, CapLen, x.bindings())
}

// DecodeHCACaps2 reads general caps 2 from b (at least CapLen bytes).
func DecodeHCACaps2(b []byte) (HCACaps2, error) {
	var x HCACaps2
	err := decodeFields("decode cmd_hca_cap_2", b, CapLen, x.bindings())
	return x, err
}

// CapType reports the capability type of the structure.
func (HCACaps2) CapType() CapType { return CapGeneral2 }

// Capability is one of the typed capability structures (HCACaps,
// AtomicCaps, RoCECaps, HCACaps2).
type Capability interface {
	CapType() CapType
	Encode(b []byte) error
}

// QueryHCACapInFields is the input layout beyond the header.
var QueryHCACapInFields = struct {
	OtherFunction Field // other_function
	FunctionID    Field // function_id
}{
	OtherFunction: F(0x40, 1),
	FunctionID:    F(0x50, 16),
}

// QueryHCACapIn is the QUERY_HCA_CAP input. The header's OpMod carries the
// capability type and the current/maximum selector: build it with
// NewQueryHCACapIn, read it with CapType and Current.
type QueryHCACapIn struct {
	CmdHeader
	OtherFunction bool
	FunctionID    uint16
}

// NewQueryHCACapIn asks for capability type t, current (true) or maximum
// (false) values, of the own function.
func NewQueryHCACapIn(t CapType, current bool) QueryHCACapIn {
	return QueryHCACapIn{CmdHeader: CmdHeader{Opcode: OpQueryHCACap, OpMod: HCACapOpMod(t, current)}}
}

// CapType returns the capability type in op_mod.
func (in QueryHCACapIn) CapType() CapType { return CapType(in.OpMod >> 1) }

// Current reports whether the current (not maximum) values are asked for.
func (in QueryHCACapIn) Current() bool { return in.OpMod&1 != 0 }

func (in *QueryHCACapIn) bindings() []binding {
	f := QueryHCACapInFields
	return []binding{
		bindBool("other_function", f.OtherFunction, &in.OtherFunction),
		bindUint("function_id", f.FunctionID, &in.FunctionID),
	}
}

// Marshal builds the 16-byte mailbox. An op_mod whose type does not fit
// (bits above 15:1) cannot occur; any type value is passed through, the
// device rejects the unknown ones.
func (in QueryHCACapIn) Marshal() ([]byte, error) {
	const name = "QUERY_HCA_CAP in"
	b, err := marshalIn(name, in.CmdHeader, OpQueryHCACap, QueryHCACapInLen)
	if err != nil {
		return nil, err
	}
	if err := encodeFields("marshal "+name, b, QueryHCACapInLen, in.bindings()); err != nil {
		return nil, err
	}
	return b, nil
}

// UnmarshalQueryHCACapIn parses a QUERY_HCA_CAP input.
func UnmarshalQueryHCACapIn(b []byte) (QueryHCACapIn, error) {
	const name = "QUERY_HCA_CAP in"
	var in QueryHCACapIn
	h, err := unmarshalIn(name, b, OpQueryHCACap, QueryHCACapInLen)
	if err != nil {
		return in, err
	}
	in.CmdHeader = h
	err = decodeFields("unmarshal "+name, b, QueryHCACapInLen, in.bindings())
	return in, err
}

// QueryHCACapOut is the 4112-byte output: the status header and the
// capability union at byte 16. Cap holds the union's first CapLen bytes
// (all the types used here define); the rest of the union is zero.
type QueryHCACapOut struct {
	OutHeader
	Cap [CapLen]byte
}

// NewQueryHCACapOut builds a successful output carrying c.
func NewQueryHCACapOut(c Capability) (QueryHCACapOut, error) {
	var o QueryHCACapOut
	err := c.Encode(o.Cap[:])
	return o, err
}

// Marshal builds the 4112-byte output mailbox.
func (o QueryHCACapOut) Marshal() ([]byte, error) {
	b := make([]byte, QueryHCACapOutLen)
	_ = o.OutHeader.Encode(b)
	copy(b[capMailboxByte:], o.Cap[:])
	return b, nil
}

// UnmarshalQueryHCACapOut parses a 4112-byte output.
func UnmarshalQueryHCACapOut(b []byte) (QueryHCACapOut, error) {
	var o QueryHCACapOut
	h, err := unmarshalOut("QUERY_HCA_CAP out", b, QueryHCACapOutLen)
	if err != nil {
		return o, err
	}
	o.OutHeader = h
	copy(o.Cap[:], b[capMailboxByte:])
	return o, nil
}

// General decodes Cap as general caps (type 0).
func (o QueryHCACapOut) General() (HCACaps, error) { return DecodeHCACaps(o.Cap[:]) }

// Atomic decodes Cap as atomic caps (type 3).
func (o QueryHCACapOut) Atomic() (AtomicCaps, error) { return DecodeAtomicCaps(o.Cap[:]) }

// RoCE decodes Cap as RoCE caps (type 4).
func (o QueryHCACapOut) RoCE() (RoCECaps, error) { return DecodeRoCECaps(o.Cap[:]) }

// General2 decodes Cap as general caps 2 (type 0x20).
func (o QueryHCACapOut) General2() (HCACaps2, error) { return DecodeHCACaps2(o.Cap[:]) }

// DecodeCapability decodes a capability structure of type t from b.
func DecodeCapability(t CapType, b []byte) (Capability, error) {
	var (
		c   Capability
		err error
	)
	switch t {
	case CapGeneral:
		c, err = DecodeHCACaps(b)
	case CapAtomic:
		c, err = DecodeAtomicCaps(b)
	case CapRoCE:
		c, err = DecodeRoCECaps(b)
	case CapGeneral2:
		c, err = DecodeHCACaps2(b)
	default:
		return nil, &LayoutError{Op: "decode capability", Field: "op_mod", Err: ErrInvalid,
			Detail: fmt.Sprintf("capability type %v is not supported", t)}
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}
