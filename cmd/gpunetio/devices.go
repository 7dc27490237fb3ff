package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gdaki/gpunetio/doctor"
	"github.com/gdaki/gpunetio/verbs"
)

// rdmaDevice is one RDMA device in the listing.
type rdmaDevice struct {
	Name      string     `json:"name"`
	Driver    string     `json:"driver"`
	NodeGUID  string     `json:"node_guid"`
	FWVersion string     `json:"fw_version,omitempty"`
	Ports     []rdmaPort `json:"ports"`
	Error     string     `json:"error,omitempty"`
}

type rdmaPort struct {
	Port      uint8     `json:"port"`
	State     string    `json:"state"`
	LinkLayer string    `json:"link_layer"`
	ActiveMTU int       `json:"active_mtu"`
	MaxMTU    int       `json:"max_mtu"`
	LID       uint16    `json:"lid,omitempty"`
	GIDs      []gidInfo `json:"gids"`
}

type gidInfo struct {
	Index uint32 `json:"index"`
	GID   string `json:"gid"`
	Type  string `json:"type"`
}

type deviceList struct {
	RDMA   []rdmaDevice `json:"rdma_devices"`
	GPUs   []doctor.GPU `json:"gpus"`
	Errors []string     `json:"errors,omitempty"`
}

// rdmaHandle is what devices reads from an open RDMA device; verbsDevice
// implements it over package verbs, tests fake it.
type rdmaHandle interface {
	// attr returns the firmware version and the number of physical ports.
	attr() (fw string, ports uint8, err error)
	port(p uint8) (portAttr, error)
	// gid returns entry index of port p's GID table; an unused entry is
	// the zero GID or an error.
	gid(p uint8, index uint32) (gid [16]byte, typ string, err error)
	Close() error
}

// portAttr is a port's state as devices prints it.
type portAttr struct {
	State, LinkLayer  string
	ActiveMTU, MaxMTU int // bytes
	LID               uint16
	GIDTblLen         uint32
}

// verbsDevice is an RDMA device opened with package verbs.
type verbsDevice struct{ c *verbs.Context }

func openVerbs(name string) (rdmaHandle, error) {
	c, err := verbs.OpenDevice(name)
	if err != nil {
		return nil, err
	}
	return verbsDevice{c}, nil
}

func (d verbsDevice) attr() (string, uint8, error) {
	a, err := verbs.QueryDevice(d.c)
	if err != nil {
		return "", 0, err
	}
	return a.FWVersion, a.PhysPortCnt, nil
}

func (d verbsDevice) port(p uint8) (portAttr, error) {
	a, err := d.c.QueryPort(p)
	if err != nil {
		return portAttr{}, err
	}
	return portAttr{State: a.State.String(), LinkLayer: a.LinkLayer.String(), ActiveMTU: a.ActiveMTU.Bytes(),
		MaxMTU: a.MaxMTU.Bytes(), LID: a.LID, GIDTblLen: a.GIDTblLen}, nil
}

func (d verbsDevice) gid(p uint8, index uint32) ([16]byte, string, error) {
	e, err := d.c.QueryGID(p, index)
	if err != nil {
		return [16]byte{}, "", err
	}
	return e.GID, e.Type.String(), nil
}

func (d verbsDevice) Close() error { return d.c.Close() }

// maxGIDs bounds the GID table walk of one port.
const maxGIDs = 256

// describe opens a device and reads its ports and GID tables.
func describe(d deps, info verbs.DeviceInfo) rdmaDevice {
	out := rdmaDevice{Name: info.Name, Driver: info.Driver, NodeGUID: fmt.Sprintf("%016x", info.NodeGUID), Ports: []rdmaPort{}}
	dev, err := d.openRDMA(info.Name)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	defer func() {
		if err := dev.Close(); err != nil && out.Error == "" {
			out.Error = err.Error()
		}
	}()
	fw, nports, err := dev.attr()
	if err != nil {
		out.Error = err.Error()
		return out
	}
	out.FWVersion = fw
	for p := uint8(1); p <= nports && p != 0; p++ {
		pa, err := dev.port(p)
		if err != nil {
			out.Error = err.Error()
			return out
		}
		port := rdmaPort{Port: p, State: pa.State, LinkLayer: pa.LinkLayer,
			ActiveMTU: pa.ActiveMTU, MaxMTU: pa.MaxMTU, LID: pa.LID, GIDs: []gidInfo{}}
		n := pa.GIDTblLen
		if n > maxGIDs {
			n = maxGIDs
		}
		for i := uint32(0); i < n; i++ {
			g, typ, err := dev.gid(p, i)
			if err != nil || g == ([16]byte{}) {
				continue // an empty slot
			}
			// netip writes an IPv4-mapped GID as ::ffff:a.b.c.d, which
			// says what it is; net.IP would drop the prefix.
			port.GIDs = append(port.GIDs, gidInfo{Index: i, GID: netip.AddrFrom16(g).String(), Type: typ})
		}
		out.Ports = append(out.Ports, port)
	}
	return out
}

func listDevices(d deps) deviceList {
	var l deviceList
	l.RDMA = []rdmaDevice{}
	l.GPUs = []doctor.GPU{}
	infos, err := d.listRDMA()
	if err != nil {
		l.Errors = append(l.Errors, "RDMA devices: "+err.Error())
	}
	for _, info := range infos {
		l.RDMA = append(l.RDMA, describe(d, info))
	}
	gpus, err := d.gpus.GPUs()
	if err != nil {
		l.Errors = append(l.Errors, "GPUs: "+err.Error())
	}
	l.GPUs = append(l.GPUs, gpus...)
	return l
}

func runDevices(args []string, d deps, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("devices", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	if ok, code := parseFlags(fs, args, stderr); !ok {
		return code
	}
	l := listDevices(d)
	code := exitOK
	if len(l.RDMA) == 0 && len(l.GPUs) == 0 && len(l.Errors) > 0 {
		code = exitFail
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(l); err != nil {
			fmt.Fprintln(stderr, "gpunetio devices:", err)
			return exitFail
		}
		return code
	}
	printDevices(stdout, l)
	for _, e := range l.Errors {
		fmt.Fprintln(stderr, "gpunetio devices:", e)
	}
	return code
}

func printDevices(w io.Writer, l deviceList) {
	fmt.Fprintln(w, "RDMA devices")
	t := newTable(w, "DEVICE", "DRIVER", "PORT", "STATE", "LINK", "MTU", "FW", "GIDS")
	for _, dev := range l.RDMA {
		if dev.Error != "" && len(dev.Ports) == 0 {
			t.row(dev.Name, dev.Driver, "-", "-", "-", "-", "-", "error: "+dev.Error)
			continue
		}
		for _, p := range dev.Ports {
			t.row(dev.Name, dev.Driver, strconv.Itoa(int(p.Port)), p.State, p.LinkLayer,
				fmt.Sprintf("%d/%d", p.ActiveMTU, p.MaxMTU), orDash(dev.FWVersion), strconv.Itoa(len(p.GIDs)))
		}
	}
	t.flush()
	if len(l.RDMA) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	var gids [][]string
	for _, dev := range l.RDMA {
		for _, p := range dev.Ports {
			for _, g := range p.GIDs {
				gids = append(gids, []string{dev.Name, strconv.Itoa(int(p.Port)), strconv.Itoa(int(g.Index)), g.GID, g.Type})
			}
		}
	}
	if len(gids) > 0 {
		fmt.Fprintln(w, "\nGIDs")
		t = newTable(w, "DEVICE", "PORT", "INDEX", "GID", "TYPE")
		for _, g := range gids {
			t.row(g...)
		}
		t.flush()
	}
	fmt.Fprintln(w, "\nGPUs")
	t = newTable(w, "GPU", "BUS ID", "NAME", "MEMORY", "BAR1 USED/TOTAL", "PERSISTENCE")
	for _, g := range l.GPUs {
		pm := "off"
		if g.Persistence {
			pm = "on"
		}
		t.row(strconv.Itoa(g.Index), g.BusID, g.Name, fmt.Sprintf("%d MiB", g.MemTotal>>20),
			fmt.Sprintf("%d/%d MiB", g.BAR1Used>>20, g.BAR1Total>>20), pm)
	}
	t.flush()
	if len(l.GPUs) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
