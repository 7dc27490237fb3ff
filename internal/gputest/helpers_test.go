package gputest

import (
	"encoding/binary"
	"strings"
	"testing"
)

// These run without a GPU: they pin the host side of the kernel contract.

func TestKernelArgsLayout(t *testing.T) {
	a := kernelArgs{qps: 1, cqps: 2, nqps: 3, op: 4, laddr: 5, raddr: 6, lsig: 7, rsig: 8, lcnt: 9, rcnt: 10,
		lkey: 11, rkey: 12, size: 13, iters: 14, timeoutNS: 15, status: 16}
	b := a.bytes()
	if len(b) != kernelArgsSize {
		t.Fatalf("gt_args is %d bytes, want %d", len(b), kernelArgsSize)
	}
	le := binary.LittleEndian
	fields := []struct {
		name  string
		off   int
		width int
		want  uint64
	}{
		{"qps", 0, 8, 1}, {"cqps", 8, 8, 2}, {"nqps", 16, 4, 3}, {"op", 20, 4, 4},
		{"laddr", 24, 8, 5}, {"raddr", 32, 8, 6}, {"lsig", 40, 8, 7}, {"rsig", 48, 8, 8},
		{"lcnt", 56, 8, 9}, {"rcnt", 64, 8, 10}, {"lkey", 72, 4, 11}, {"rkey", 76, 4, 12},
		{"size", 80, 4, 13}, {"iters", 84, 4, 14}, {"timeout_ns", 88, 8, 15}, {"status", 96, 8, 16},
	}
	for _, f := range fields {
		var got uint64
		if f.width == 8 {
			got = le.Uint64(b[f.off:])
		} else {
			got = uint64(le.Uint32(b[f.off:]))
		}
		if got != f.want {
			t.Errorf("field %s at offset %d: got %d, want %d", f.name, f.off, got, f.want)
		}
	}
}

func TestCheckFetchAdds(t *testing.T) {
	tests := []struct {
		name   string
		olds   []uint64
		adds   []uint64
		final  uint64
		errHas string
	}{
		{"in order", []uint64{0, 1, 3}, []uint64{1, 2, 3}, 6, ""},
		{"any order", []uint64{3, 0, 1}, []uint64{3, 1, 2}, 6, ""},
		{"gap", []uint64{0, 2}, []uint64{1, 1}, 2, "do not chain"},
		{"duplicate", []uint64{0, 0}, []uint64{1, 1}, 2, "do not chain"},
		{"final differs", []uint64{0, 1}, []uint64{1, 1}, 3, "holds 3"},
		{"none", nil, nil, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := checkFetchAdds(tc.olds, tc.adds, tc.final)
			if tc.errHas == "" && msg != "" {
				t.Fatalf("unexpected failure: %s", msg)
			}
			if tc.errHas != "" && !strings.Contains(msg, tc.errHas) {
				t.Fatalf("got %q, want a message containing %q", msg, tc.errHas)
			}
		})
	}
}

func TestExpectOneSided(t *testing.T) {
	init := newImages(1)
	tests := []struct {
		name  string
		op    uint32
		size  uint32
		check func(t *testing.T, x expectation)
	}{
		{"put copies initiator bytes", opPut, 10, func(t *testing.T, x expectation) {
			for i := 0; i < 2*3*10; i++ {
				if x.want.rem[i] != init.loc[i] {
					t.Fatalf("target byte %d not the initiator's", i)
				}
			}
			if x.want.rem[60] != init.rem[60] {
				t.Fatal("byte after the last op changed")
			}
		}},
		{"get copies target bytes", opGet, 10, func(t *testing.T, x expectation) {
			if x.want.loc[59] != init.rem[59] || x.want.loc[60] != init.loc[60] {
				t.Fatal("get model wrong at the edge of the last op")
			}
		}},
		{"p writes the value little-endian", opP, 2, func(t *testing.T, x expectation) {
			v := pValue(5, 2)
			if x.want.rem[10] != byte(v) || x.want.rem[11] != byte(v>>8) {
				t.Fatal("p value of op 5 wrong")
			}
		}},
		{"put_signal counts per thread", opPutSignal, 8, func(t *testing.T, x expectation) {
			if getU64(x.want.rem, sigOff+8) != 3 || getU64(x.want.rem, sigOff+16) != 3 || getU64(x.want.loc, sigOff+8*4) != 1 {
				t.Fatal("signal words or fetch results wrong")
			}
		}},
		{"signal sums thread ids", opSignal, 8, func(t *testing.T, x expectation) {
			if getU64(x.want.rem, sigOff) != 3*1+3*2 || len(x.extra) != 1 || len(x.skipLoc) != 1 {
				t.Fatal("shared signal word or its check wrong")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, expectOneSided(tc.op, tc.size, 2, 3, init))
		})
	}
}

func TestLayoutWhere(t *testing.T) {
	l := layout{size: 100, iters: 2}
	tests := []struct {
		off  int
		want string
	}{
		{250, "op 2 (thread 1, iteration 0), byte 50 of 100"},
		{sigOff + 17, "signal word 2, byte 1"},
		{cntOff + 8, "counter/fetch word 1, byte 0"},
	}
	for _, tc := range tests {
		if got := l.where(tc.off); !strings.Contains(got, tc.want) {
			t.Errorf("where(%d) = %q, want it to contain %q", tc.off, got, tc.want)
		}
	}
}
