package verbs

import (
	"errors"
	"net"
	"strings"
	"sync"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// DeviceInfo names an RDMA device that can be opened.
type DeviceInfo struct {
	Name     string // "mlx5_0", "emu0"
	Driver   string // "devx" (rdma-core) or "emu" (the emulated ConnectX)
	NodeGUID uint64
}

// Devices lists the RDMA devices of this machine: real mlx5 devices (through
// rdma-core, when it is installed) followed by the emulated ones.
func Devices() ([]DeviceInfo, error) {
	ds, err := mlx5.Devices()
	if err != nil {
		return nil, wrapErr("ibv_get_device_list", ErrDriver, err, "")
	}
	out := make([]DeviceInfo, len(ds))
	for i, d := range ds {
		out[i] = DeviceInfo{Name: d.Name, Driver: d.Driver, NodeGUID: d.NodeGUID}
	}
	return out, nil
}

// Context is an opened RDMA device with a DevX context (an ibv_context
// opened through mlx5dv_open_device with the DEVX flag).
type Context struct {
	node
	dev  mlx5.Device
	name string

	attrMu sync.Mutex
	attr   *DeviceAttr // capability snapshot for CQ/QP/SRQ validation

	async asyncEvents // the device's asynchronous events (async.go)
}

// caps returns the device's capabilities, queried once per Context: DOCA
// repeats the query (four commands) on every CQ, QP and SRQ creation, but the
// capabilities of an open device do not change.
func (c *Context) caps() (*DeviceAttr, error) {
	c.attrMu.Lock()
	defer c.attrMu.Unlock()
	if c.attr != nil {
		return c.attr, nil
	}
	a, err := c.queryDevice("doca_verbs_query_device")
	if err != nil {
		return nil, err
	}
	c.attr = a
	return a, nil
}

// OpenDevice opens the device with exactly this name.
func OpenDevice(name string) (*Context, error) {
	const op = "ibv_open_device"
	if name == "" {
		return nil, newErr(op, ErrInvalidValue, "empty device name")
	}
	d, err := mlx5.Open(name)
	if err != nil {
		code := ErrDriver
		if errors.Is(err, mlx5.ErrNoDevice) {
			code = ErrNotFound
		}
		return nil, wrapErr(op, code, err, "device %q", name)
	}
	c := &Context{dev: d, name: name}
	c.openAsync()
	c.init("Context", "Context "+name)
	return c, nil
}

// OpenDevicePrefix opens the first device whose name starts with prefix, the
// way the DOCA examples match -d (so "mlx5_1" also opens "mlx5_10" when
// "mlx5_1" does not exist). Prefer OpenDevice.
func OpenDevicePrefix(prefix string) (*Context, error) {
	ds, err := Devices()
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if d.Name == prefix {
			return OpenDevice(d.Name)
		}
	}
	for _, d := range ds {
		if strings.HasPrefix(d.Name, prefix) {
			return OpenDevice(d.Name)
		}
	}
	return OpenDevice(prefix) // reports the not-found error with the device list
}

// Name is the device name ("" for a nil or zero Context).
func (c *Context) Name() string {
	if c == nil {
		return ""
	}
	return c.name
}

// Driver is "devx" for a real device and "emu" for an emulated one ("" for
// a nil or zero Context).
func (c *Context) Driver() string {
	if c == nil || c.dev == nil {
		return ""
	}
	return c.dev.Driver()
}

// check refuses a nil or zero-value Context and a closed one.
func (c *Context) check(op string) error {
	if c == nil {
		return newErr(op, ErrInvalidValue, "nil context")
	}
	return c.use(op, "Context")
}

// enterCtx holds c open for a call that uses the device (leave with c.leave).
func (c *Context) enterCtx(op string) error {
	if c == nil {
		return newErr(op, ErrInvalidValue, "nil context")
	}
	return c.enter(op, "Context")
}

// Hold takes a reference that keeps the device open (Close fails with
// ErrInUse naming holder) until Hold.Release; ErrBadState if it is closed.
func (c *Context) Hold(holder string) (*Hold, error) {
	const op = "Context.Hold"
	if c == nil {
		return nil, newErr(op, ErrInvalidValue, "nil context")
	}
	return c.hold(op, "Context", holder)
}

// Close closes the device. It fails with ErrInUse while PDs, CQs, QPs, UMEMs,
// UARs or completion channels made on it are open; a second Close returns
// nil. A GetAsyncEvent waiting on it returns ErrChannelClosed.
func (c *Context) Close() error {
	const op = "ibv_close_device"
	if c == nil {
		return newErr(op, ErrInvalidValue, "nil context")
	}
	done, err := c.beginClose(op, "Context")
	if done || err != nil {
		return err
	}
	c.closeAsync()
	err = c.dev.Close()
	if err != nil {
		err = driverErr(op, err, "device %s", c.name)
	}
	c.endClose(err)
	return err
}

// PortAttr is the state of a physical port (ibv_query_port).
type PortAttr struct {
	State     PortState
	MaxMTU    MTU
	ActiveMTU MTU
	GIDTblLen uint32 // entries in the port's GID table
	LID       uint16 // the port's LID on InfiniBand; 0 on Ethernet
	LinkLayer LinkLayer
}

// checkPort refuses a port the device does not have (ports are numbered
// from 1 to DeviceAttr.PhysPortCnt). c is entered.
func (c *Context) checkPort(op string, port uint8) error {
	if port == 0 {
		return newErr(op, ErrInvalidValue, "port 0: port numbers start at 1")
	}
	a, err := c.caps()
	if err != nil {
		return wrapErr(op, codeOf(err), err, "device query")
	}
	if port > a.PhysPortCnt {
		return newErr(op, ErrInvalidValue, "port %d: device %s has ports 1..%d", port, c.name, a.PhysPortCnt)
	}
	return nil
}

// QueryPort reports the state of a port (ports are numbered from 1); a port
// the device does not have is ErrInvalidValue.
func (c *Context) QueryPort(port uint8) (PortAttr, error) {
	const op = "ibv_query_port"
	if err := c.enterCtx(op); err != nil {
		return PortAttr{}, err
	}
	defer c.leave()
	if err := c.checkPort(op, port); err != nil {
		return PortAttr{}, err
	}
	p, err := c.dev.QueryPort(port)
	if err != nil {
		return PortAttr{}, driverErr(op, err, "device %s port %d", c.name, port)
	}
	return PortAttr{State: PortState(p.State), MaxMTU: mtuFromIBV(p.MaxMTU), ActiveMTU: mtuFromIBV(p.ActiveMTU),
		GIDTblLen: p.GIDTblLen, LID: p.LID, LinkLayer: LinkLayer(p.LinkLayer)}, nil
}

// mtuFromIBV maps enum ibv_mtu (1 = 256) to MTU (0 = 256).
func mtuFromIBV(v uint8) MTU {
	if v == 0 {
		return MTU256
	}
	return MTU(v - 1)
}

// GID is a 16-byte global identifier in network order (struct doca_verbs_gid).
type GID [16]byte

// String formats the GID as an IPv6 address (IPv4-mapped GIDs as ::ffff:a.b.c.d).
func (g GID) String() string { return net.IP(g[:]).String() }

// IPv4 returns the IPv4 address of an IPv4-mapped GID, or nil.
func (g GID) IPv4() net.IP { return net.IP(g[:]).To4() }

// ParseGID parses an IPv6 or IPv4 address (IPv4 becomes ::ffff:a.b.c.d).
func ParseGID(s string) (GID, error) {
	ip := net.ParseIP(s)
	if ip == nil {
		return GID{}, newErr("ParseGID", ErrInvalidValue, "%q is not an IPv4 or IPv6 address", s)
	}
	var g GID
	copy(g[:], ip.To16())
	return g, nil
}

// GIDEntry is one entry of a port's GID table.
type GIDEntry struct {
	GID   GID
	Index uint32
	Type  GIDType
}

// QueryGID reads GID table entry index of a port (ibv_query_gid_ex). A
// port the device does not have, or an index beyond the port's GID table,
// is ErrInvalidValue.
func (c *Context) QueryGID(port uint8, index uint32) (GIDEntry, error) {
	const op = "ibv_query_gid_ex"
	if err := c.enterCtx(op); err != nil {
		return GIDEntry{}, err
	}
	defer c.leave()
	if err := c.checkPort(op, port); err != nil {
		return GIDEntry{}, err
	}
	p, err := c.dev.QueryPort(port)
	if err != nil {
		return GIDEntry{}, driverErr(op, err, "device %s port %d", c.name, port)
	}
	if index >= p.GIDTblLen {
		return GIDEntry{}, newErr(op, ErrInvalidValue, "GID index %d: port %d of %s has %d entries", index, port, c.name, p.GIDTblLen)
	}
	e, err := c.dev.QueryGID(port, index)
	if err != nil {
		return GIDEntry{}, driverErr(op, err, "device %s port %d index %d", c.name, port, index)
	}
	return GIDEntry{GID: GID(e.GID), Index: e.Index, Type: GIDType(e.Type)}, nil
}
