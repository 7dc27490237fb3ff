package doctor

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
)

// extCap writes an extended capability header at off.
func extCap(cfg []byte, off int, id uint16, next int) {
	binary.LittleEndian.PutUint32(cfg[off:], uint32(id)|1<<16|uint32(next)<<20)
}

func TestParseACS(t *testing.T) {
	type tc struct {
		name    string
		cfg     func() []byte
		found   bool
		ctrl    uint16
		offset  int
		wantErr error
	}
	full := func() []byte { return make([]byte, 4096) }
	tests := []tc{
		{name: "64 bytes (unprivileged read)", cfg: func() []byte { return make([]byte, 64) }, wantErr: ErrNoExtendedConfig},
		{name: "256 bytes (legacy only)", cfg: func() []byte { return make([]byte, 256) }, wantErr: ErrNoExtendedConfig},
		{name: "no extended caps", cfg: full},
		{name: "all ones (device gone)", cfg: func() []byte {
			b := full()
			binary.LittleEndian.PutUint32(b[0x100:], 0xffffffff)
			return b
		}},
		{name: "ACS first, redirects on", cfg: func() []byte {
			b := full()
			extCap(b, 0x100, 0x000d, 0)
			binary.LittleEndian.PutUint16(b[0x104:], 0x007f)
			binary.LittleEndian.PutUint16(b[0x106:], 0x001d)
			return b
		}, found: true, ctrl: 0x001d, offset: 0x100},
		{name: "ACS after AER and DPC", cfg: func() []byte {
			b := full()
			extCap(b, 0x100, 0x0001, 0x148)
			extCap(b, 0x148, 0x001d, 0x200)
			extCap(b, 0x200, 0x000d, 0)
			binary.LittleEndian.PutUint16(b[0x206:], 0x0001)
			return b
		}, found: true, ctrl: 0x0001, offset: 0x200},
		{name: "no ACS in the list", cfg: func() []byte {
			b := full()
			extCap(b, 0x100, 0x0001, 0x148)
			extCap(b, 0x148, 0x0010, 0)
			return b
		}},
		{name: "loop", cfg: func() []byte {
			b := full()
			extCap(b, 0x100, 0x0001, 0x148)
			extCap(b, 0x148, 0x0010, 0x100)
			return b
		}, wantErr: ErrBadCapList},
		{name: "next below 0x100", cfg: func() []byte {
			b := full()
			extCap(b, 0x100, 0x0001, 0x040)
			return b
		}, wantErr: ErrBadCapList},
		{name: "misaligned next", cfg: func() []byte {
			b := full()
			extCap(b, 0x100, 0x0001, 0x142)
			return b
		}, wantErr: ErrBadCapList},
		{name: "next past a short image", cfg: func() []byte {
			b := make([]byte, 0x120)
			extCap(b, 0x100, 0x0001, 0x200)
			return b
		}, wantErr: ErrBadCapList},
		{name: "ACS header at the very end", cfg: func() []byte {
			b := make([]byte, 0x106)
			extCap(b, 0x100, 0x000d, 0)
			return b
		}, wantErr: ErrBadCapList},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acs, found, err := ParseACS(tt.cfg())
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				assert.False(t, found)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tt.found, found)
			assert.Equal(t, tt.ctrl, acs.Control)
			if found {
				assert.Equal(t, tt.offset, acs.Offset)
			}
		})
	}
}

func TestACSRedirects(t *testing.T) {
	tests := []struct {
		ctrl  uint16
		redir uint16
		names string
	}{
		{0x0000, 0, "none"},
		{ACSSourceValidation | ACSTranslationBlocking, 0, "SrcValid,TransBlk"},
		{0x001d, ACSP2PRequestRedirect | ACSP2PCompletionRedir | ACSUpstreamForwarding, "SrcValid,ReqRedir,CmpltRedir,UpstreamFwd"},
		{ACSP2PEgressControl, ACSP2PEgressControl, "EgressCtrl"},
		{ACSDirectTranslatedP2P, 0, "DirectTrans"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.redir, ACS{Control: tc.ctrl}.Redirects(), "0x%04x", tc.ctrl)
		assert.Equal(t, tc.names, ACSNames(tc.ctrl))
	}
}
