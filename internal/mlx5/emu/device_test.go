package emu

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

func TestProviderListsDevices(t *testing.T) {
	cases := []struct {
		env  string
		want []string
		err  bool
	}{
		{"", []string{"emu0", "emu1"}, false},
		{"3", []string{"emu0", "emu1", "emu2"}, false},
		{"0", nil, false},
		{"x", nil, true},
	}
	for _, tc := range cases {
		t.Run("env="+tc.env, func(t *testing.T) {
			t.Setenv(EnvDevices, tc.env)
			ds, err := provider{}.Devices()
			if (err != nil) != tc.err {
				t.Fatalf("err %v", err)
			}
			if len(ds) != len(tc.want) {
				t.Fatalf("devices %v, want %v", ds, tc.want)
			}
			for i, d := range ds {
				if d.Name != tc.want[i] || d.Driver != "emu" || d.NodeGUID == 0 {
					t.Fatalf("device %d: %+v", i, d)
				}
			}
		})
	}
}

func TestOpenByName(t *testing.T) {
	t.Setenv(EnvDevices, "2")
	ds, err := mlx5.Devices()
	must(t, err)
	found := 0
	for _, d := range ds {
		if d.Driver == "emu" {
			found++
		}
	}
	if found != 2 {
		t.Fatalf("mlx5.Devices lists %d emulated devices: %v", found, ds)
	}
	d1, err := mlx5.Open("emu1")
	must(t, err)
	d2, err := mlx5.Open("emu1")
	must(t, err)
	if d1.Name() != "emu1" || d1.Driver() != "emu" {
		t.Fatalf("opened %s/%s", d1.Name(), d1.Driver())
	}
	g1, err := d1.QueryGID(1, 0)
	must(t, err)
	g2, _ := d2.QueryGID(1, 0)
	if g1.GID != g2.GID || g1.Type != mlx5.GIDTypeRoCEv2 || !ipv4Mapped(g1.GID) {
		t.Fatalf("two contexts of one NIC disagree on the GID: %v %v", g1, g2)
	}
	if _, err := d1.QueryGID(1, 1); !errors.Is(err, syscall.ENODATA) {
		t.Fatalf("empty GID entry: %v", err)
	}
	p, err := d1.QueryPort(1)
	must(t, err)
	if p.State != mlx5.PortActive || p.LinkLayer != mlx5.LinkLayerEthernet || p.ActiveMTU != 5 {
		t.Fatalf("port %+v", p)
	}
	must(t, d1.Close())
	must(t, d2.Close())
	if _, err := mlx5.Open("emu2"); !errors.Is(err, mlx5.ErrNoDevice) {
		t.Fatalf("emu2 with 2 devices: %v", err)
	}
	t.Setenv(EnvModel, "cx9")
	if _, err := namedDevice("emu-nope"); err == nil {
		t.Fatal("bad model accepted")
	}
}

func TestDeviceObjects(t *testing.T) {
	nic := newNIC(t, Config{})
	dev, err := nic.Open()
	must(t, err)
	pd, err := dev.AllocPD()
	must(t, err)
	buf := hostMem(t, 1<<16)

	t.Run("mr_access_rules", func(t *testing.T) {
		_, err := dev.RegMR(pd, addrOf(buf), 4096, 0, mlx5.AccessRemoteWrite)
		if !errors.Is(err, syscall.EINVAL) {
			t.Fatalf("remote write without local write: %v", err)
		}
		_, err = dev.RegMR(pd, addrOf(buf), 4096, 0, mlx5.AccessOnDemand)
		if !errors.Is(err, syscall.EINVAL) {
			t.Fatalf("ODP: %v", err)
		}
	})
	t.Run("unmapped_memory", func(t *testing.T) {
		tmp, err := syscall.Mmap(-1, 0, 8192, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		must(t, err)
		a := addrOf(tmp)
		syscall.Munmap(tmp)
		if _, err := dev.RegMR(pd, a, 8192, 0, mlx5.AccessLocalWrite); !errors.Is(err, syscall.EFAULT) {
			t.Fatalf("MR on unmapped memory: %v", err)
		}
		if _, err := dev.RegUMEM(a, 8192, 0); !errors.Is(err, syscall.EFAULT) {
			t.Fatalf("UMEM on unmapped memory: %v", err)
		}
	})
	t.Run("keys_and_busy_pd", func(t *testing.T) {
		m1, err := dev.RegMR(pd, addrOf(buf), 4096, 0x1000, mlx5.AccessLocalWrite|mlx5.AccessRemoteRead)
		must(t, err)
		m2, err := dev.RegDmabufMR(pd, 0, 0, 4096, 0x2000, addrOf(buf), mlx5.AccessLocalWrite)
		must(t, err)
		if m1.LKey() != m1.RKey() || m1.LKey() == m2.LKey() || m1.IOVA() != 0x1000 || m1.Len() != 4096 {
			t.Fatalf("keys %x %x", m1.LKey(), m2.LKey())
		}
		if err := pd.Dealloc(); !errors.Is(err, syscall.EBUSY) {
			t.Fatalf("dealloc PD with MRs: %v", err)
		}
		if err := dev.Close(); !errors.Is(err, syscall.EBUSY) {
			t.Fatalf("close device with objects: %v", err)
		}
		must(t, m1.Dereg())
		must(t, m2.Dereg())
		must(t, m1.Dereg()) // idempotent
	})
	t.Run("uar_types", func(t *testing.T) {
		nc1, err := dev.AllocUAR(mlx5.UARTypeNC)
		must(t, err)
		nc2, err := dev.AllocUAR(mlx5.UARTypeNC)
		must(t, err)
		if nc1.PageID() != nc2.PageID() {
			t.Fatal("NC UAR is not the context's singleton")
		}
		must(t, nc1.Free()) // a no-op
		bf, err := dev.AllocUAR(mlx5.UARTypeBF)
		must(t, err)
		if bf.PageID() == nc1.PageID() || bf.RegAddr() != bf.BaseAddr()+0x800 || bf.IOMemory() {
			t.Fatalf("BF UAR %d", bf.PageID())
		}
		must(t, bf.Free())
		if _, err := dev.AllocUAR(7); !errors.Is(err, syscall.EOPNOTSUPP) {
			t.Fatalf("UAR type 7: %v", err)
		}
	})
	must(t, pd.Dealloc())
	must(t, dev.Close())
	if _, err := dev.AllocPD(); !errors.Is(err, syscall.EBADF) {
		t.Fatalf("alloc on closed device: %v", err)
	}
}

// TestUC: WRITE and SEND over UC complete without ACKs.
func TestUC(t *testing.T) {
	a, b := twoNICs(t)
	x, y := pair(t, a, b, qpOpts{uc: true}, qpOpts{uc: true, rq: true, logRQ: 2})
	fill(x.data[:2000], 4)
	idx := x.post(mlx5.NewRDMAWrite(signaled, y.raddr(0), x.sge(0, 2000)))
	expectOK(t, x.mustPoll(), mlx5.WQEOpRDMAWrite, idx)
	y.postRecv(y.va(4096), 100)
	x.post(mlx5.NewSendInline(signaled, []byte("uc")))
	x.mustPoll()
	if c := y.mustPoll(); c.Opcode != mlx5.CQERespSend || string(y.data[4096:4098]) != "uc" {
		t.Fatalf("UC SEND: %v", c.Opcode)
	}
	if string(y.data[:2000]) != string(x.data[:2000]) {
		t.Fatal("UC WRITE data")
	}
	x.post(mlx5.NewRDMARead(signaled, y.raddr(0), x.sge(0, 8)))
	if c := x.mustPoll(); c.Syndrome != mlx5.SyndromeLocalQPOpErr {
		t.Fatalf("READ on UC: %v %v", c.Opcode, c.Syndrome)
	}
}

// A model outside the enumeration is refused (it used to run as a cx7 and
// print as one); the names round-trip through ParseModel.
func TestModelNames(t *testing.T) {
	for _, m := range []Model{ModelCX7, ModelCX8} {
		got, err := ParseModel(m.String())
		if err != nil || got != m {
			t.Errorf("ParseModel(%q) = %v, %v", m.String(), got, err)
		}
	}
	if s := Model(7).String(); s != "Model(7)" {
		t.Errorf("Model(7) prints %q", s)
	}
	n, err := NewNIC(Config{Name: "emuBadModel", Model: 7})
	if err == nil {
		n.Close()
		t.Fatal("NewNIC accepted model 7")
	}
	if !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), "Model(7)") {
		t.Fatalf("NewNIC(model 7): %v", err)
	}
}
