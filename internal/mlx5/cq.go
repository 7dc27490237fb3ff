package mlx5

// CQ context (cqc) and the CQ commands CREATE_CQ, QUERY_CQ
// and DESTROY_CQ. DESTROY_CQ and QUERY_CQ inputs are
// ObjCmdIn (misc_cmd.go); CREATE_CQ's output is CreateOut.

// Sizes and positions of the CQ layouts.
const (
	CQCLen         = 64
	CreateCQInLen  = 272
	QueryCQOutLen  = 272
	CQCMailboxBit  = 0x80 // cqc inside CREATE_CQ in and QUERY_CQ out
	cqcMailboxByte = CQCMailboxBit / 8
)

// CQE size codes of cqc.cqe_sz.
const (
	CQESize64  = 0
	CQESize128 = 1
)

// CQCFields is the bit layout of CQContext, relative to the start of the structure.
var CQCFields = struct {
	Status                Field // status
	AsNotify              Field // as_notify
	InitiatorSrcDCT       Field // initiator_src_dct
	DBRUMEMValid          Field // dbr_umem_valid
	CQESz                 Field // cqe_sz
	CC                    Field // cc
	SCQEBreakModerationEn Field // scqe_break_moderation_en
	OI                    Field // oi
	CQPeriodMode          Field // cq_period_mode
	CQECompEn             Field // cqe_comp_en
	MiniCQEResFormat      Field // mini_cqe_res_format
	ST                    Field // st
	DBRUMEMID             Field // dbr_umem_id
	PageOffset            Field // page_offset
	MiniCQEResFormatExt   Field // mini_cqe_res_format_ext
	CQTimestampFormat     Field // cq_timestamp_format
	LogCQSize             Field // log_cq_size
	UARPage               Field // uar_page
	CQPeriod              Field // cq_period
	CQMaxCount            Field // cq_max_count
	CEQN                  Field // c_eqn
	LogPageSize           Field // log_page_size
	LastNotifiedIndex     Field // last_notified_index
	LastSolicitIndex      Field // last_solicit_index
	ConsumerCounter       Field // consumer_counter
	ProducerCounter       Field // producer_counter
	LocalPartitionID      Field // local_partition_id
	ProcessID             Field // process_id
	DBRAddr               Field // dbr_addr
}{
	Status:                F(0x000, 4),
	AsNotify:              F(0x004, 1),
	InitiatorSrcDCT:       F(0x005, 1),
	DBRUMEMValid:          F(0x006, 1),
	CQESz:                 F(0x008, 3),
	CC:                    F(0x00b, 1),
	SCQEBreakModerationEn: F(0x00d, 1),
	OI:                    F(0x00e, 1),
	CQPeriodMode:          F(0x00f, 2),
	CQECompEn:             F(0x011, 1),
	MiniCQEResFormat:      F(0x012, 2),
	ST:                    F(0x014, 4),
	DBRUMEMID:             F(0x020, 32),
	PageOffset:            F(0x054, 6),
	MiniCQEResFormatExt:   F(0x05c, 2),
	CQTimestampFormat:     F(0x05e, 2),
	LogCQSize:             F(0x063, 5),
	UARPage:               F(0x068, 24),
	CQPeriod:              F(0x084, 12),
	CQMaxCount:            F(0x090, 16),
	CEQN:                  F(0x0b8, 8),
	LogPageSize:           F(0x0c3, 5),
	LastNotifiedIndex:     F(0x108, 24),
	LastSolicitIndex:      F(0x128, 24),
	ConsumerCounter:       F(0x148, 24),
	ProducerCounter:       F(0x168, 24),
	LocalPartitionID:      F(0x180, 12),
	ProcessID:             F(0x18c, 20),
	DBRAddr:               F(0x1c0, 64),
}

// CQContext is the cqc. Status, ST and the four counters are read-only
// (QUERY_CQ reports them). CEQN is the 8-bit c_eqn of GN/DPDK; the kernel
// names the whole dword c_eqn_or_apu_element, which is the same for EQNs
// below 256.
type CQContext struct {
	Status                uint8    // status
	AsNotify              bool     // as_notify
	InitiatorSrcDCT       bool     // initiator_src_dct
	DBRUMEMValid          bool     // dbr_umem_valid
	CQESz                 uint8    // cqe_sz
	CC                    bool     // cc
	SCQEBreakModerationEn bool     // scqe_break_moderation_en
	OI                    bool     // oi
	CQPeriodMode          uint8    // cq_period_mode
	CQECompEn             bool     // cqe_comp_en
	MiniCQEResFormat      uint8    // mini_cqe_res_format
	ST                    uint8    // st
	DBRUMEMID             uint32   // dbr_umem_id
	PageOffset            uint8    // page_offset
	MiniCQEResFormatExt   uint8    // mini_cqe_res_format_ext
	CQTimestampFormat     TSFormat // cq_timestamp_format
	LogCQSize             uint8    // log_cq_size
	UARPage               uint32   // uar_page
	CQPeriod              uint16   // cq_period
	CQMaxCount            uint16   // cq_max_count
	CEQN                  uint8    // c_eqn
	LogPageSize           uint8    // log_page_size
	LastNotifiedIndex     uint32   // last_notified_index
	LastSolicitIndex      uint32   // last_solicit_index
	ConsumerCounter       uint32   // consumer_counter
	ProducerCounter       uint32   // producer_counter
	LocalPartitionID      uint16   // local_partition_id
	ProcessID             uint32   // process_id
	DBRAddr               uint64   // dbr_addr
}

func (x *CQContext) bindings() []binding {
	return []binding{
		bindUint("status", CQCFields.Status, &x.Status),
		bindBool("as_notify", CQCFields.AsNotify, &x.AsNotify),
		bindBool("initiator_src_dct", CQCFields.InitiatorSrcDCT, &x.InitiatorSrcDCT),
		bindBool("dbr_umem_valid", CQCFields.DBRUMEMValid, &x.DBRUMEMValid),
		bindUint("cqe_sz", CQCFields.CQESz, &x.CQESz),
		bindBool("cc", CQCFields.CC, &x.CC),
		bindBool("scqe_break_moderation_en", CQCFields.SCQEBreakModerationEn, &x.SCQEBreakModerationEn),
		bindBool("oi", CQCFields.OI, &x.OI),
		bindUint("cq_period_mode", CQCFields.CQPeriodMode, &x.CQPeriodMode),
		bindBool("cqe_comp_en", CQCFields.CQECompEn, &x.CQECompEn),
		bindUint("mini_cqe_res_format", CQCFields.MiniCQEResFormat, &x.MiniCQEResFormat),
		bindUint("st", CQCFields.ST, &x.ST),
		bindUint("dbr_umem_id", CQCFields.DBRUMEMID, &x.DBRUMEMID),
		bindUint("page_offset", CQCFields.PageOffset, &x.PageOffset),
		bindUint("mini_cqe_res_format_ext", CQCFields.MiniCQEResFormatExt, &x.MiniCQEResFormatExt),
		bindUint("cq_timestamp_format", CQCFields.CQTimestampFormat, &x.CQTimestampFormat),
		bindUint("log_cq_size", CQCFields.LogCQSize, &x.LogCQSize),
		bindUint("uar_page", CQCFields.UARPage, &x.UARPage),
		bindUint("cq_period", CQCFields.CQPeriod, &x.CQPeriod),
		bindUint("cq_max_count", CQCFields.CQMaxCount, &x.CQMaxCount),
		bindUint("c_eqn", CQCFields.CEQN, &x.CEQN),
		bindUint("log_page_size", CQCFields.LogPageSize, &x.LogPageSize),
		bindUint("last_notified_index", CQCFields.LastNotifiedIndex, &x.LastNotifiedIndex),
		bindUint("last_solicit_index", CQCFields.LastSolicitIndex, &x.LastSolicitIndex),
		bindUint("consumer_counter", CQCFields.ConsumerCounter, &x.ConsumerCounter),
		bindUint("producer_counter", CQCFields.ProducerCounter, &x.ProducerCounter),
		bindUint("local_partition_id", CQCFields.LocalPartitionID, &x.LocalPartitionID),
		bindUint("process_id", CQCFields.ProcessID, &x.ProcessID),
		bindUint("dbr_addr", CQCFields.DBRAddr, &x.DBRAddr),
	}
}

// Encode writes the cqc into b (at least 64 bytes). A value that does not
// fit its field is an error and leaves b untouched.
func (x CQContext) Encode(b []byte) error {
	return encodeFields("encode cqc", b, CQCLen, x.bindings())
}

// DecodeCQContext reads a cqc from b (at least 64 bytes).
func DecodeCQContext(b []byte) (CQContext, error) {
	var x CQContext
	err := decodeFields("decode cqc", b, CQCLen, x.bindings())
	return x, err
}

// CreateCQInFields is the CREATE_CQ input layout outside the cqc
// (absolute bit addresses in the mailbox).
var CreateCQInFields = struct {
	CQUMEMOffset Field // cq_umem_offset
	CQUMEMID     Field // cq_umem_id
	CQUMEMValid  Field // cq_umem_valid
}{
	CQUMEMOffset: F(0x280, 64),
	CQUMEMID:     F(0x2c0, 32),
	CQUMEMValid:  F(0x2e0, 1),
}

// CreateCQIn is the CREATE_CQ (0x400) input: cqc plus the umem holding the
// CQE ring (the PAS list is not used: the mailbox is 272 bytes).
type CreateCQIn struct {
	CmdHeader
	CQC          CQContext
	CQUMEMOffset uint64
	CQUMEMID     uint32
	CQUMEMValid  bool
}

func (in *CreateCQIn) bindings() []binding {
	f := CreateCQInFields
	bs := nest("cq_context", CQCMailboxBit, in.CQC.bindings())
	return append(bs,
		bindUint("cq_umem_offset", f.CQUMEMOffset, &in.CQUMEMOffset),
		bindUint("cq_umem_id", f.CQUMEMID, &in.CQUMEMID),
		bindBool("cq_umem_valid", f.CQUMEMValid, &in.CQUMEMValid),
	)
}

// Marshal builds the 272-byte mailbox.
func (in CreateCQIn) Marshal() ([]byte, error) {
	const name = "CREATE_CQ in"
	b, err := marshalIn(name, in.CmdHeader, OpCreateCQ, CreateCQInLen)
	if err != nil {
		return nil, err
	}
	if err := encodeFields("marshal "+name, b, CreateCQInLen, in.bindings()); err != nil {
		return nil, err
	}
	return b, nil
}

// UnmarshalCreateCQIn parses a 272-byte CREATE_CQ input.
func UnmarshalCreateCQIn(b []byte) (CreateCQIn, error) {
	const name = "CREATE_CQ in"
	var in CreateCQIn
	h, err := unmarshalIn(name, b, OpCreateCQ, CreateCQInLen)
	if err != nil {
		return in, err
	}
	in.CmdHeader = h
	err = decodeFields("unmarshal "+name, b, CreateCQInLen, in.bindings())
	return in, err
}

// QueryCQOut is the 272-byte QUERY_CQ (0x402) output: the live cqc.
type QueryCQOut struct {
	OutHeader
	CQC CQContext
}

// Marshal builds the 272-byte output mailbox.
func (o QueryCQOut) Marshal() ([]byte, error) {
	b := make([]byte, QueryCQOutLen)
	_ = o.OutHeader.Encode(b)
	if err := o.CQC.Encode(b[cqcMailboxByte:]); err != nil {
		return nil, err
	}
	return b, nil
}

// UnmarshalQueryCQOut parses a QUERY_CQ output.
func UnmarshalQueryCQOut(b []byte) (QueryCQOut, error) {
	var o QueryCQOut
	h, err := unmarshalOut("QUERY_CQ out", b, QueryCQOutLen)
	if err != nil {
		return o, err
	}
	o.OutHeader = h
	o.CQC, err = DecodeCQContext(b[cqcMailboxByte:])
	return o, err
}
