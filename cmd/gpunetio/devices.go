package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gdaki/gpunetio/internal/doctor"
	"github.com/gdaki/gpunetio/internal/mlx5"
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

// mtuBytes turns enum ibv_mtu (1 = 256 ... 5 = 4096) into bytes.
func mtuBytes(m uint8) int {
	if m < 1 || m > 5 {
		return 0
	}
	return 128 << m
}

// maxGIDs bounds the GID table walk of one port.
const maxGIDs = 256

// describe opens a device and reads its ports and GID tables.
func describe(d deps, info mlx5.DeviceInfo) rdmaDevice {
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
	attr, err := dev.QueryDevice()
	if err != nil {
		out.Error = err.Error()
		return out
	}
	out.FWVersion = attr.FWVersion
	for p := uint8(1); p <= attr.PhysPortCnt && p != 0; p++ {
		pa, err := dev.QueryPort(p)
		if err != nil {
			out.Error = err.Error()
			return out
		}
		port := rdmaPort{Port: p, State: pa.State.String(), LinkLayer: pa.LinkLayer.String(),
			ActiveMTU: mtuBytes(pa.ActiveMTU), MaxMTU: mtuBytes(pa.MaxMTU), LID: pa.LID, GIDs: []gidInfo{}}
		n := pa.GIDTblLen
		if n > maxGIDs {
			n = maxGIDs
		}
		for i := uint32(0); i < n; i++ {
			g, err := dev.QueryGID(p, i)
			if err != nil || g.GID == (mlx5.GID{}) {
				continue // an empty slot
			}
			port.GIDs = append(port.GIDs, gidInfo{Index: i, GID: netip.AddrFrom16(g.GID).String(), Type: g.Type.String()})
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
