package emu

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// TestExhaustionNamesTheLimit checks that every allocation the emulator
// refuses for lack of room says which resource ran out and its limit.
func TestExhaustionNamesTheLimit(t *testing.T) {
	nic := newNIC(t, Config{Name: "emuX"})
	dev, err := nic.Open()
	must(t, err)
	pd, err := dev.AllocPD()
	must(t, err)

	// The PD table at max_pd: placeholders fill it for the call.
	nic.mu.Lock()
	for i := uint32(0); len(nic.pds) < 1<<capLogMaxPD; i++ {
		if _, ok := nic.pds[mask24-i]; !ok {
			nic.pds[mask24-i] = nil
		}
	}
	nic.mu.Unlock()
	_, err = dev.AllocPD()
	wantLimit(t, err, "alloc_pd on emuX: all 262144 PDs in use (max_pd, log_max_pd 18)")
	nic.mu.Lock()
	for k, v := range nic.pds {
		if v == nil {
			delete(nic.pds, k)
		}
	}
	// Every PD number taken: the only one is held by pd.
	saved := nic.ids.pd
	nic.ids.pd = newIDSpace(pd.PDN(), pd.PDN(), pd.PDN())
	nic.mu.Unlock()
	_, err = dev.AllocPD()
	wantLimit(t, err, "alloc_pd on emuX: all 16777215 24-bit PD numbers in use")
	nic.mu.Lock()
	nic.ids.pd = saved
	nic.mu.Unlock()

	buf := hostMem(t, 1<<16)
	mr, err := dev.RegMR(pd, addrOf(buf), 4096, 0, mlx5.AccessLocalWrite)
	must(t, err)
	nic.mu.Lock()
	savedMkey := nic.ids.mkey
	idx := mr.LKey() >> 8
	nic.ids.mkey = newIDSpace(idx, idx, idx)
	nic.mu.Unlock()
	_, err = dev.RegMR(pd, addrOf(buf), 4096, 0, mlx5.AccessLocalWrite)
	wantLimit(t, err, "all 16777214 24-bit memory key indexes in use")
	nic.mu.Lock()
	nic.ids.mkey = savedMkey
	nic.mu.Unlock()
	must(t, mr.Dereg())

	um, err := dev.RegUMEM(addrOf(buf), 4096, mlx5.AccessLocalWrite)
	must(t, err)
	nic.mu.Lock()
	savedUMEM := nic.ids.umem
	nic.ids.umem = newIDSpace(um.ID(), um.ID(), um.ID())
	nic.mu.Unlock()
	_, err = dev.RegUMEM(addrOf(buf), 4096, mlx5.AccessLocalWrite)
	wantLimit(t, err, "all 4294967295 32-bit UMEM ids in use")
	nic.mu.Lock()
	nic.ids.umem = savedUMEM
	nic.mu.Unlock()
	must(t, um.Dereg())
	must(t, pd.Dealloc())
	must(t, dev.Close())

	for syn, want := range map[uint32]string{
		SynLimitCQ:  "CQ table full: all 262144 CQs in use (log_max_cq 18)",
		SynLimitQP:  "QP table full: all 262144 QPs in use (log_max_qp 18)",
		SynLimitRMP: "RMP table full: all 16777215 RMP numbers in use",
	} {
		st, meaning, ok := SyndromeInfo(syn)
		if !ok || st != mlx5.StatusLimErr || meaning != want {
			t.Errorf("syndrome %#x: %v %q %v, want LIM_ERR %q", syn, st, meaning, ok, want)
		}
	}
}

func wantLimit(t *testing.T, err error, want string) {
	t.Helper()
	if !errors.Is(err, syscall.ENOMEM) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want ENOMEM saying %q", err, want)
	}
}
