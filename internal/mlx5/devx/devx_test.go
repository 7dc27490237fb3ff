//go:build cgo

package devx

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/dl"
	"github.com/gdaki/gpunetio/internal/mlx5"
)

// TestMain fails the package when a test leaves a device open, and serves
// as the child process of TestMissingLibrary.
func TestMain(m *testing.M) {
	if os.Getenv("GDAKI_DEVX_CHILD") == "1" {
		childMain()
		return
	}
	code := m.Run()
	if n := openDevices.Load(); n != 0 && code == 0 {
		fmt.Fprintf(os.Stderr, "devx: %d device(s) left open by the tests\n", n)
		code = 1
	}
	os.Exit(code)
}

// childMain reports, one fact a line, what Devices and Open say under the
// library names of its environment.
func childMain() {
	_, err := Provider{}.Devices()
	fmt.Printf("devices: %v\n", err)
	fmt.Printf("unavailable: %v\n", errors.Is(err, ErrUnavailable))
	var le *LibraryError
	if errors.As(err, &le) {
		fmt.Printf("library: %s\n", le.Library)
		fmt.Printf("symbol: %s\n", le.Symbol)
	}
	_, err = mlx5.Open("mlx5_0")
	fmt.Printf("open: %v\n", err)
	os.Exit(0)
}

// rdmaDevices lists the RDMA devices the kernel exposes (none on CI).
func rdmaDevices(t *testing.T) []string {
	ents, err := os.ReadDir("/sys/class/infiniband")
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestLibrariesLoad(t *testing.T) {
	require.NoError(t, load(), "rdma-core (libibverbs1, ibverbs-providers) must be installed where these tests run")
	require.NoError(t, probe(LibIBVerbs, LibMLX5))
}

func TestDevicesWithoutHardware(t *testing.T) {
	present := rdmaDevices(t)
	devs, err := Provider{}.Devices()
	require.NoError(t, err)
	if len(present) == 0 {
		assert.Empty(t, devs, "no RDMA device in sysfs, so none listed")
	}
	for _, d := range devs {
		assert.Equal(t, Name, d.Driver)
		assert.Contains(t, present, d.Name)
		assert.True(t, strings.HasSuffix(d.Sysfs, "/"+d.Name), d.Sysfs)
	}
	all, err := mlx5.Devices()
	require.NoError(t, err)
	assert.Len(t, all, len(devs), "the registry lists the devx provider's devices")
}

func TestOpenMissingDevice(t *testing.T) {
	const name = "mlx5_gdaki_absent"
	_, err := Provider{}.Open(name)
	require.Error(t, err)
	assert.Contains(t, err.Error(), name)
	assert.ErrorIs(t, err, mlx5.ErrNoDevice)
	assert.ErrorIs(t, err, syscall.ENODEV)

	_, err = Provider{}.Open("")
	assert.ErrorIs(t, err, syscall.EINVAL)

	if len(rdmaDevices(t)) == 0 {
		_, err = mlx5.Open("mlx5_0")
		require.Error(t, err)
		assert.Contains(t, err.Error(), `"mlx5_0"`)
		assert.ErrorIs(t, err, mlx5.ErrNoDevice)
	}
}

// TestMissingLibrary runs the package's test binary as a child with the
// library names overridden, because the driver loads rdma-core once per
// process.
func TestMissingLibrary(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	tests := []struct {
		name    string
		env     string
		lib     string
		symbol  string
		mention []string
	}{
		{"no libibverbs", EnvLibIBVerbs + "=libgdaki-absent-verbs.so.1", "libgdaki-absent-verbs.so.1", "",
			[]string{"cannot load libgdaki-absent-verbs.so.1", EnvLibIBVerbs, "rdma-core unavailable"}},
		{"no libmlx5", EnvLibMLX5 + "=libgdaki-absent-mlx5.so.1", "libgdaki-absent-mlx5.so.1", "",
			[]string{"cannot load libgdaki-absent-mlx5.so.1", EnvLibMLX5}},
		// libc loads fine as "libibverbs" but has no verbs.
		{"libibverbs without verbs", EnvLibIBVerbs + "=libc.so.6", "libc.so.6", "ibv_get_device_list@IBVERBS_1.1",
			[]string{"lacks ibv_get_device_list@IBVERBS_1.1, which every rdma-core release has"}},
		// libibverbs loads fine as "libmlx5" but has no mlx5dv entry points.
		{"libmlx5 without mlx5dv", EnvLibMLX5 + "=" + LibIBVerbs, LibIBVerbs, "mlx5dv_is_supported@MLX5_1.8",
			[]string{"lacks mlx5dv_is_supported@MLX5_1.8", "rdma-core v22"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), "GDAKI_DEVX_CHILD=1", tt.env)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			got := parseLines(string(out))
			assert.Equal(t, "true", got["unavailable"], "%s", out)
			assert.Equal(t, tt.lib, got["library"])
			assert.Equal(t, tt.symbol, got["symbol"])
			for _, m := range tt.mention {
				assert.Contains(t, got["devices"], m)
			}
			// mlx5.Open names both the device and why devx could not look.
			assert.Contains(t, got["open"], `"mlx5_0"`)
			assert.Contains(t, got["open"], "rdma-core unavailable")
		})
	}
}

func parseLines(s string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			m[k] = v
		}
	}
	return m
}

func TestProbeMissing(t *testing.T) {
	err := probe("libgdaki-absent.so.1", LibMLX5)
	var le *LibraryError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "libgdaki-absent.so.1", le.Library)
	assert.Equal(t, EnvLibIBVerbs, le.Env)
	assert.Contains(t, le.Reason, "libgdaki-absent.so.1", "dlerror() text is kept")
	var de *dl.Error
	require.ErrorAs(t, err, &de, "the loader's error is in the chain")
	assert.Equal(t, "dlopen", de.Op)
	assert.Equal(t, le.Reason, de.Msg)

	// A library that loads but lacks a required entry point: the bare-name
	// lookup's error (after the versioned one) is the one reported.
	err = probe(LibIBVerbs, LibIBVerbs)
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "mlx5dv_is_supported@MLX5_1.8", le.Symbol)
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "dlsym", de.Op)
	assert.Equal(t, "mlx5dv_is_supported", de.Symbol)
	assert.Contains(t, le.Reason, "undefined symbol: mlx5dv_is_supported")
	// The failed probes left the driver's own table alone.
	require.NoError(t, load())
	assert.NotZero(t, symbolPresent(symRegDmabufMR))
}

func symbolPresent(i int) int {
	p := swapSymbol(i, nil)
	swapSymbol(i, p)
	if p == nil {
		return 0
	}
	return 1
}

func TestSymbolTable(t *testing.T) {
	require.NoError(t, load())
	for i := 0; i < symCount; i++ {
		s := symInfo(i)
		assert.NotEmpty(t, s.name, "entry %d", i)
		assert.NotEmpty(t, s.version, s.name)
		if !s.optional {
			assert.Equal(t, 1, symbolPresent(i), "required %s is bound", s.name)
		}
	}
	for _, i := range []int{symQueryGIDEx, symRegDmabufMR, symUMEMRegEx} {
		assert.True(t, symInfo(i).optional, symInfo(i).name)
	}
	assert.Equal(t, symInfo(symUMEMRegEx), sym{"mlx5dv_devx_umem_reg_ex", "MLX5_1.19", LibMLX5, true, 35})
	assert.Equal(t, sym{}, symInfo(symCount), "out of range")
}

// fakeDevice is a device with no context: only paths that fail before
// calling rdma-core may be used on it.
func fakeDevice(name string) *device {
	return &device{name: name, live: map[string]int{}}
}

// TestMissingOptionalSymbol plays an rdma-core older than v34/v35: the calls
// that need the missing entry point fail with ENOTSUP naming it.
func TestMissingOptionalSymbol(t *testing.T) {
	require.NoError(t, load())
	d := fakeDevice("fake0")
	p := &pd{dev: d, pdn: 1}
	tests := []struct {
		sym     int
		call    func() error
		mention string
	}{
		{symRegDmabufMR, func() error {
			_, err := d.RegDmabufMR(p, 3, 0, 4096, 0, 0, mlx5.AccessLocalWrite)
			return err
		}, "ibv_reg_dmabuf_mr@IBVERBS_1.12 (added in rdma-core v34)"},
		{symUMEMRegEx, func() error {
			_, err := d.RegDmabufUMEM(3, 0, 4096, 0, mlx5.AccessLocalWrite, 0)
			return err
		}, "mlx5dv_devx_umem_reg_ex@MLX5_1.19 (added in rdma-core v35)"},
		{symQueryGIDEx, func() error {
			_, err := d.QueryGID(1, 0)
			return err
		}, "_ibv_query_gid_ex@IBVERBS_1.11 (added in rdma-core v32)"},
	}
	for _, tt := range tests {
		t.Run(symInfo(tt.sym).name, func(t *testing.T) {
			old := swapSymbol(tt.sym, nil)
			defer swapSymbol(tt.sym, old)
			err := tt.call()
			assert.ErrorIs(t, err, syscall.ENOTSUP)
			assert.Contains(t, err.Error(), tt.mention)
		})
	}
}

// TestValidationBeforeCalls checks that bad arguments are refused in Go,
// naming the call and the argument, before any C call.
func TestValidationBeforeCalls(t *testing.T) {
	d := fakeDevice("fake0")
	other := fakeDevice("fake1")
	p := &pd{dev: d, pdn: 1}
	foreign := &pd{dev: other, pdn: 2}
	gone := &pd{dev: d, pdn: 3, freed: true}
	q := hdr(16, uint64(mlx5.OpQueryHCACap), 1)
	tests := []struct {
		name    string
		call    func() error
		errno   syscall.Errno
		mention string
	}{
		{"MR at 0", func() error { _, err := d.RegMR(p, 0, 4096, 0, 0); return err }, syscall.EINVAL, "ibv_reg_mr_iova2: MR address is 0"},
		{"MR empty", func() error { _, err := d.RegMR(p, 0x1000, 0, 0, 0); return err }, syscall.EINVAL, "MR length is 0"},
		{"MR bad access", func() error { _, err := d.RegMR(p, 0x1000, 1, 0, mlx5.AccessRemoteWrite); return err }, syscall.EINVAL, "without local write"},
		{"MR nil PD", func() error { _, err := d.RegMR(nil, 0x1000, 1, 0, 0); return err }, syscall.EINVAL, "not allocated by a devx device"},
		{"MR foreign PD", func() error { _, err := d.RegMR(foreign, 0x1000, 1, 0, 0); return err }, syscall.EINVAL, "belongs to device fake1"},
		{"MR freed PD", func() error { _, err := d.RegMR(gone, 0x1000, 1, 0, 0); return err }, syscall.EBADF, "deallocated"},
		{"dmabuf MR bad fd", func() error { _, err := d.RegDmabufMR(p, -1, 0, 1, 0, 0, 0); return err }, syscall.EBADF, "fd -1"},
		{"UMEM at 0", func() error { _, err := d.RegUMEM(0, 4096, 0); return err }, syscall.EINVAL, "mlx5dv_devx_umem_reg: UMEM address is 0"},
		{"dmabuf UMEM page sizes", func() error { _, err := d.RegDmabufUMEM(3, 0, 4096, 0, 0, 1<<10); return err }, syscall.EINVAL, "under 4 KiB"},
		{"UAR type", func() error { _, err := d.AllocUAR(7); return err }, syscall.EINVAL, "UARType(0x7)"},
		{"general cmd nil", func() error { return d.GeneralCmd(nil, make([]byte, 16)) }, syscall.EINVAL, "mlx5dv_devx_general_cmd: input mailbox"},
		{"general cmd no out", func() error { return d.GeneralCmd(q, nil) }, syscall.EINVAL, "output mailbox of 0 bytes"},
		{"create short out", func() error { _, err := d.CreateObj(q, make([]byte, 8)); return err }, syscall.EINVAL, "mlx5dv_devx_obj_create"},
		{"port 0", func() error { _, err := d.QueryPort(0); return err }, syscall.EINVAL, "port numbers start at 1"},
		{"GID port 0", func() error { _, err := d.QueryGID(0, 0); return err }, syscall.EINVAL, "port numbers start at 1"},
		{"destroyed obj", func() error {
			o := &obj{dev: d, id: 9, opcode: mlx5.OpCreateCQ, destroyed: true}
			return o.Query(q, make([]byte, 16))
		}, syscall.EBADF, "CREATE_CQ object 0x9 on fake0 is destroyed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.errno)
			assert.Contains(t, err.Error(), tt.mention)
		})
	}
}

func TestClosedDevice(t *testing.T) {
	d := fakeDevice("fake0")
	d.closed = true
	assert.NoError(t, d.Close(), "closing twice is a no-op")
	calls := map[string]func() error{
		"QueryDevice":        func() error { _, err := d.QueryDevice(); return err },
		"QueryPort":          func() error { _, err := d.QueryPort(1); return err },
		"AllocPD":            func() error { _, err := d.AllocPD(); return err },
		"AllocUAR":           func() error { _, err := d.AllocUAR(mlx5.UARTypeNC); return err },
		"RegUMEM":            func() error { _, err := d.RegUMEM(0x1000, 4096, 0); return err },
		"QueryEQN":           func() error { _, err := d.QueryEQN(0); return err },
		"CreateEventChannel": func() error { _, err := d.CreateEventChannel(); return err },
		"GeneralCmd":         func() error { return d.GeneralCmd(hdr(16, 0x100, 1), make([]byte, 16)) },
		"CreateObj":          func() error { _, err := d.CreateObj(hdr(16, 0x400, 0), make([]byte, 16)); return err },
	}
	for name, call := range calls {
		err := call()
		assert.ErrorIs(t, err, syscall.EBADF, name)
		assert.Contains(t, err.Error(), "device fake0 is closed", name)
	}
}

func TestCloseRefusedWhileObjectsLive(t *testing.T) {
	d := fakeDevice("fake0")
	d.hold("PD")
	d.hold("UMEM")
	d.hold("UMEM")
	err := d.Close()
	assert.ErrorIs(t, err, syscall.EBUSY)
	assert.Contains(t, err.Error(), "device fake0 still has 1 PD, 2 UMEM alive")
	assert.False(t, d.closed)

	// A PD with MRs on it refuses too.
	p := &pd{dev: d, pdn: 5, mrs: 1}
	err = p.Dealloc()
	assert.ErrorIs(t, err, syscall.EBUSY)
	assert.Contains(t, err.Error(), "PD 0x5 on fake0 still has 1 MRs registered")
}

// TestConcurrentUse runs object bookkeeping, refused closes and refused calls
// from many goroutines at once (meaningful under -race).
func TestConcurrentUse(t *testing.T) {
	d := fakeDevice("fake0")
	d.hold("UAR") // keeps every Close refused
	p := &pd{dev: d, pdn: 1}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				d.hold("DevX object")
				if err := d.Close(); !errors.Is(err, syscall.EBUSY) {
					t.Errorf("Close while objects live: %v", err)
					return
				}
				if _, err := d.RegMR(p, 0, 1, 0, 0); !errors.Is(err, syscall.EINVAL) {
					t.Errorf("RegMR at 0: %v", err)
					return
				}
				_ = p.Native()
				d.release("DevX object")
			}
		}()
	}
	wg.Wait()
	d.liveMu.Lock()
	defer d.liveMu.Unlock()
	assert.Equal(t, map[string]int{"UAR": 1, "DevX object": 0}, d.live)
}

func TestReleaseIsIdempotent(t *testing.T) {
	d := fakeDevice("fake0")
	releases := map[string]func() error{
		"PD":   (&pd{dev: d, freed: true}).Dealloc,
		"MR":   (&mr{pd: &pd{dev: d}, freed: true}).Dereg,
		"UMEM": (&umem{dev: d, freed: true}).Dereg,
		"UAR":  (&uar{dev: d, freed: true}).Free,
		"Obj":  (&obj{dev: d, destroyed: true}).Destroy,
	}
	for name, release := range releases {
		assert.NoError(t, release(), name)
	}
	assert.Zero(t, (&pd{dev: d, freed: true}).Native())
	assert.Zero(t, (&mr{freed: true}).Native())
	d.liveMu.Lock()
	defer d.liveMu.Unlock()
	for k, n := range d.live {
		assert.Zero(t, n, "a no-op release must not change the %s count", k)
	}
}

// TestHeaderConstants checks the constants package mlx5 retypes against
// rdma-core's headers.
func TestHeaderConstants(t *testing.T) {
	c := headerConstants()
	want := map[string]uint64{
		"IBV_ACCESS_LOCAL_WRITE":             uint64(mlx5.AccessLocalWrite),
		"IBV_ACCESS_REMOTE_WRITE":            uint64(mlx5.AccessRemoteWrite),
		"IBV_ACCESS_REMOTE_READ":             uint64(mlx5.AccessRemoteRead),
		"IBV_ACCESS_REMOTE_ATOMIC":           uint64(mlx5.AccessRemoteAtomic),
		"IBV_ACCESS_MW_BIND":                 uint64(mlx5.AccessMWBind),
		"IBV_ACCESS_ZERO_BASED":              uint64(mlx5.AccessZeroBased),
		"IBV_ACCESS_ON_DEMAND":               uint64(mlx5.AccessOnDemand),
		"IBV_ACCESS_HUGETLB":                 uint64(mlx5.AccessHugeTLB),
		"IBV_ACCESS_RELAXED_ORDERING":        uint64(mlx5.AccessRelaxedOrdering),
		"IBV_ACCESS_OPTIONAL_RANGE":          uint64(accessKnown &^ 0x3ff),
		"MLX5DV_UAR_ALLOC_TYPE_BF":           uint64(mlx5.UARTypeBF),
		"MLX5DV_UAR_ALLOC_TYPE_NC":           uint64(mlx5.UARTypeNC),
		"MLX5DV_UAR_ALLOC_TYPE_NC_DEDICATED": uint64(mlx5.UARTypeNCDedicated),
		"IBV_LINK_LAYER_UNSPECIFIED":         uint64(mlx5.LinkLayerUnspecified),
		"IBV_LINK_LAYER_INFINIBAND":          uint64(mlx5.LinkLayerInfiniBand),
		"IBV_LINK_LAYER_ETHERNET":            uint64(mlx5.LinkLayerEthernet),
		"IBV_PORT_DOWN":                      uint64(mlx5.PortDown),
		"IBV_PORT_INIT":                      uint64(mlx5.PortInit),
		"IBV_PORT_ARMED":                     uint64(mlx5.PortArmed),
		"IBV_PORT_ACTIVE":                    uint64(mlx5.PortActive),
		"IBV_GID_TYPE_IB":                    uint64(mlx5.GIDTypeIB),
		"IBV_GID_TYPE_ROCE_V1":               uint64(mlx5.GIDTypeRoCEv1),
		"IBV_GID_TYPE_ROCE_V2":               uint64(mlx5.GIDTypeRoCEv2),
		"IBV_ATOMIC_HCA":                     1,
		"IBV_ATOMIC_GLOB":                    2,
	}
	require.Len(t, c, len(want))
	for k, v := range want {
		assert.Equal(t, v, c[k], k)
	}
}

// releaseTwice calls each release in order, twice: the first call must
// succeed and the second is the no-op every Close, Dereg, Dealloc, Free and
// Destroy promises.
func releaseTwice(t *testing.T, release ...func() error) {
	t.Helper()
	for _, f := range release {
		require.NoError(t, f())
		require.NoError(t, f(), "a second release is a no-op")
	}
}
