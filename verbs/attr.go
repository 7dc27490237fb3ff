package verbs

// DeviceAttr is a snapshot of a device's capabilities
// (doca_verbs_query_device): what ibv_query_device reports plus the DevX
// capabilities DOCA reads with QUERY_HCA_CAP (general, RoCE, general 2).
type DeviceAttr struct {
	MaxQP, MaxQPWR, MaxSGE, MaxCQ, MaxCQE, MaxMR, MaxPD, MaxAH, MaxSRQ, MaxSRQWR, MaxSRQSGE uint32
	MaxPKeys                                                                                uint16
	// SendDBRModeNoDBRExt: QPs may run without a doorbell record (ConnectX-8 class).
	SendDBRModeNoDBRExt bool
	MaxQPRDAtom         uint8
	MaxQPInitRDAtom     uint8

	// The capabilities DOCA keeps internal; read-only here.
	PhysPortCnt   uint8
	PortType      uint8 // 0 InfiniBand, 1 Ethernet
	GIDTableSize  uint32
	RCSupported   bool
	RTS2RTSQPDSCP bool
	MaxSQDescSize uint32 // max_wqe_sz_sq, bytes
	MaxRQDescSize uint32 // max_wqe_sz_rq, bytes
	MaxSendWQEBB  uint64 // 1 << log_max_qp_sz
	MinUDPSport   uint16
	MaxUDPSport   uint16
	// CoreDirect: WAIT / SEND_EN cross-channel WQEs and cd_master QPs.
	CoreDirect bool
	// CQOverrunIgnore: CQs may be created with overrun ignore.
	CQOverrunIgnore bool
	// TSFormat is the cap sq_ts_format: 0 free-running only, 1 real-time only, 2 both.
	TSFormat                     uint8
	LogMaxMsg                    uint8
	LogMaxRAReqQP, LogMaxRAResQP uint8
	FWVersion                    string
	VendorPartID                 uint32
	// MaxMRSize is the largest memory region or UMEM the device registers
	// (ibv_device_attr.max_mr_size), in bytes.
	MaxMRSize uint64
	// AtomicCap is the device's atomicity guarantee
	// (doca_verbs_device_attr_get_atomic_cap, ibv_device_attr.atomic_cap).
	AtomicCap AtomicCap
	// FreeRunningClockKHz is the frequency of the device's free-running
	// clock, in kHz (doca_verbs_device_attr_get_ts_free_running_clock_frequency;
	// HCA capability device_frequency_khz).
	FreeRunningClockKHz uint32
}

// QueryDevice reads the device's capabilities (doca_verbs_query_device).
func QueryDevice(c *Context) (*DeviceAttr, error) {
	const op = "doca_verbs_query_device"
	if err := c.enterCtx(op); err != nil {
		return nil, err
	}
	defer c.leave()
	return c.queryDevice(op)
}

// queryDevice reads the capabilities; the caller holds c open.
func (c *Context) queryDevice(op string) (*DeviceAttr, error) {
	ib, err := c.dev.QueryDevice()
	if err != nil {
		return nil, driverErr(op, err, "ibv_query_device on %s", c.name)
	}
	a := &DeviceAttr{
		MaxQP: ib.MaxQP, MaxQPWR: ib.MaxQPWR, MaxSGE: ib.MaxSGE, MaxCQ: ib.MaxCQ, MaxCQE: ib.MaxCQE,
		MaxMR: ib.MaxMR, MaxPD: ib.MaxPD, MaxAH: ib.MaxAH, MaxSRQ: ib.MaxSRQ, MaxSRQWR: ib.MaxSRQWR,
		MaxSRQSGE: ib.MaxSRQSGE, MaxPKeys: ib.MaxPKeys, PhysPortCnt: ib.PhysPortCnt,
		MaxQPRDAtom: uint8(ib.MaxQPRDAtom), MaxQPInitRDAtom: uint8(ib.MaxQPInitRDAtom),
		FWVersion: ib.FWVersion, VendorPartID: ib.VendorPartID, MaxMRSize: ib.MaxMRSize,
		AtomicCap: AtomicCap(ib.AtomicCap),
	}
	if err := prmQueryCaps(c.dev, a); err != nil {
		return nil, driverErr(op, err, "QUERY_HCA_CAP on %s", c.name)
	}
	return a, nil
}

// QPTypeSupported reports whether QPs of type t can be created
// (doca_verbs_device_attr_get_is_qp_type_supported): nil for RC when the
// device supports RC, ErrNotSupported without the capability, ErrInvalidValue
// for any other type.
func (a *DeviceAttr) QPTypeSupported(t QPType) error {
	const op = "doca_verbs_device_attr_get_is_qp_type_supported"
	if a == nil {
		return newErr(op, ErrInvalidValue, "nil device attributes")
	}
	if t != QPTypeRC {
		return newErr(op, ErrInvalidValue, "QP type %v: only RC is supported", t)
	}
	if !a.RCSupported {
		return newErr(op, ErrNotSupported, "device does not report the rc capability")
	}
	return nil
}

// gidTableSizeIB decodes the IB gid_table_size capability (0 = 8 ... 4 = 128).
func gidTableSizeIB(code uint32) uint32 {
	if code > 4 {
		return 0
	}
	return 8 << code
}

// AtomicCap is how atomic RDMA operations are atomic
// (enum doca_verbs_atomic_cap, enum ibv_atomic_cap).
type AtomicCap uint32

// The atomic capabilities.
const (
	AtomicCapNone AtomicCap = 0 // no atomic operations
	AtomicCapHCA  AtomicCap = 1 // atomic among the QPs of this device only
	AtomicCapGlob AtomicCap = 2 // atomic against the CPUs and other devices too
)
