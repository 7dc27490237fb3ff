package devx

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// hdr returns an input mailbox of n bytes with opcode and op_mod set.
func hdr(n int, opcode, opMod uint64) []byte {
	b := make([]byte, n)
	if n >= 8 {
		mlx5.Set(b, mlx5.F(0, 16), opcode)
		mlx5.Set(b, mlx5.F(0x30, 16), opMod)
	}
	return b
}

func TestCheckMailbox(t *testing.T) {
	tunnel := hdr(16, uint64(mlx5.OpCreateCQ), 0)
	mlx5.Set(tunnel, vhcaTunnelID, 7)
	tests := []struct {
		name    string
		in, out []byte
		minOut  int
		errno   syscall.Errno // 0: accepted
		mention string
	}{
		{"query caps", hdr(16, uint64(mlx5.OpQueryHCACap), 1), make([]byte, 4112), mailboxHeader, 0, ""},
		{"create with id room", hdr(16, uint64(mlx5.OpCreateCQ), 0), make([]byte, 16), createOutMin, 0, ""},
		{"nil input", nil, make([]byte, 16), mailboxHeader, syscall.EINVAL, "shorter than the 8-byte command header"},
		{"short input", make([]byte, 4), make([]byte, 16), mailboxHeader, syscall.EINVAL, "input mailbox of 4 bytes"},
		{"ragged input", make([]byte, 18), make([]byte, 16), mailboxHeader, syscall.EINVAL, "not a whole number of 32-bit dwords"},
		{"huge input", make([]byte, maxMailbox+4), make([]byte, 16), mailboxHeader, syscall.EINVAL, "exceeds"},
		{"nil output", hdr(16, 0x100, 1), nil, mailboxHeader, syscall.EINVAL, "output mailbox of 0 bytes"},
		{"create output without id", hdr(16, 0x400, 0), make([]byte, 8), createOutMin, syscall.EINVAL, "shorter than 12 bytes"},
		{"ragged output", hdr(16, 0x100, 1), make([]byte, 14), mailboxHeader, syscall.EINVAL, "output mailbox of 14 bytes is not a whole number"},
		{"huge output", hdr(16, 0x100, 1), make([]byte, maxMailbox+4), mailboxHeader, syscall.EINVAL, "output mailbox"},
		{"tunnel id", tunnel, make([]byte, 16), mailboxHeader, syscall.EINVAL, "CREATE_CQ: vhca_tunnel_id is 0x7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkMailbox("op_x", tt.in, tt.out, tt.minOut)
			if tt.errno == 0 {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.errno)
			assert.Contains(t, err.Error(), "op_x")
			assert.Contains(t, err.Error(), tt.mention)
		})
	}
}

func TestObjID(t *testing.T) {
	out := make([]byte, 16)
	mlx5.Set(out, objIDField, 0xabcdef)
	out[8] = 0xff // the byte before the 24-bit id is not part of it
	assert.Equal(t, uint32(0xabcdef), objID(out))
	assert.Equal(t, uint32(0), objID(out[:11]), "a short output has no id")
}

func TestCheckRange(t *testing.T) {
	tests := []struct {
		name    string
		addr    uintptr
		length  uint64
		ok      bool
		mention string
	}{
		{"page", 0x1000, 4096, true, ""},
		{"nil address", 0, 4096, false, "address is 0"},
		{"empty", 0x1000, 0, false, "length is 0"},
		{"wraps", ^uintptr(0) - 10, 4096, false, "wraps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkRange("RegX", "MR", tt.addr, tt.length)
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, syscall.EINVAL)
			assert.Contains(t, err.Error(), tt.mention)
			assert.Contains(t, err.Error(), "RegX")
		})
	}
}

func TestCheckDmabuf(t *testing.T) {
	tests := []struct {
		name           string
		fd             int
		offset, length uint64
		errno          syscall.Errno
	}{
		{"ok", 5, 0, 1 << 21, 0},
		{"ok at offset", 5, 1 << 20, 4096, 0},
		{"negative fd", -1, 0, 4096, syscall.EBADF},
		{"empty", 5, 0, 0, syscall.EINVAL},
		{"overflow", 5, ^uint64(0) - 1, 4096, syscall.EINVAL},
		{"too large", 5, 0, 1 << 63, syscall.EINVAL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkDmabuf("ibv_reg_dmabuf_mr", tt.fd, tt.offset, tt.length)
			if tt.errno == 0 {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.errno)
			assert.Contains(t, err.Error(), "ibv_reg_dmabuf_mr")
		})
	}
}

func TestCheckAccess(t *testing.T) {
	tests := []struct {
		name   string
		access mlx5.Access
		ok     bool
	}{
		{"none", 0, true},
		{"local write", mlx5.AccessLocalWrite, true},
		{"rdma", mlx5.AccessLocalWrite | mlx5.AccessRemoteWrite | mlx5.AccessRemoteRead | mlx5.AccessRemoteAtomic, true},
		{"relaxed ordering", mlx5.AccessLocalWrite | mlx5.AccessRelaxedOrdering, true},
		{"remote read only", mlx5.AccessRemoteRead, true},
		{"remote write without local write", mlx5.AccessRemoteWrite, false},
		{"atomic without local write", mlx5.AccessRemoteAtomic | mlx5.AccessRemoteRead, false},
		{"unknown bit 12", 1 << 12, false},
		{"unknown bit 31", 1 << 31, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkAccess("op", tt.access)
			if tt.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, syscall.EINVAL)
			}
		})
	}
}

func TestCheckUARType(t *testing.T) {
	for _, ty := range []mlx5.UARType{mlx5.UARTypeBF, mlx5.UARTypeNC, mlx5.UARTypeNCDedicated} {
		assert.NoError(t, checkUARType("op", ty), ty.String())
	}
	for _, ty := range []mlx5.UARType{2, 3, 1<<31 | 1, 1 << 30} {
		err := checkUARType("op", ty)
		assert.ErrorIs(t, err, syscall.EINVAL, ty.String())
		assert.Contains(t, err.Error(), ty.String())
	}
}

func TestPageSizeMask(t *testing.T) {
	got, err := pageSizeMask("op", 0, 4096)
	require.NoError(t, err)
	assert.Equal(t, uint64(4096), got, "0 means the system page size")
	got, err = pageSizeMask("op", 1<<12|1<<21, 4096)
	require.NoError(t, err)
	assert.Equal(t, uint64(1<<12|1<<21), got)
	_, err = pageSizeMask("op", 1<<11|1<<12, 4096)
	assert.ErrorIs(t, err, syscall.EINVAL)
}

func TestCString(t *testing.T) {
	assert.Equal(t, "16.35.2000", cString([]byte("16.35.2000\x00\x00garbage")))
	assert.Equal(t, "abc", cString([]byte("abc")))
	assert.Equal(t, "", cString(nil))
}

func TestBusyDetail(t *testing.T) {
	s := busyDetail("mlx5_3", map[string]int{"PD": 1, "UMEM": 2, "UAR": 0})
	assert.Equal(t, "device mlx5_3 still has 1 PD, 2 UMEM alive; release them first", s)
}

func TestError(t *testing.T) {
	tests := []struct {
		name    string
		err     *Error
		text    string
		matches []error
		not     []error
	}{
		{
			name:    "errno",
			err:     &Error{Op: "ibv_alloc_pd", Errno: syscall.ENOMEM, Detail: "device mlx5_0"},
			text:    "devx: ibv_alloc_pd: device mlx5_0: ENOMEM (cannot allocate memory)",
			matches: []error{syscall.ENOMEM},
			not:     []error{syscall.EINVAL, mlx5.ErrNoDevice},
		},
		{
			name:    "errno and cause",
			err:     &Error{Op: "Open", Errno: syscall.ENODEV, Detail: `no mlx5 device "x"`, Err: mlx5.ErrNoDevice},
			text:    `devx: Open: no mlx5 device "x": ENODEV (no such device): no such RDMA device`,
			matches: []error{syscall.ENODEV, mlx5.ErrNoDevice},
			not:     []error{ErrUnavailable},
		},
		{
			name:    "unnamed errno",
			err:     &Error{Op: "x", Errno: syscall.Errno(200)},
			text:    "devx: x: errno 200 (errno 200)",
			matches: []error{syscall.Errno(200)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.text, tt.err.Error())
			wrapped := fmt.Errorf("outer: %w", tt.err)
			for _, m := range tt.matches {
				assert.ErrorIs(t, wrapped, m)
			}
			for _, m := range tt.not {
				assert.NotErrorIs(t, wrapped, m)
			}
			var e *Error
			require.ErrorAs(t, wrapped, &e)
			assert.Equal(t, tt.err.Op, e.Op)
		})
	}
}

func TestErrnoString(t *testing.T) {
	assert.Equal(t, "EREMOTEIO (remote I/O error)", ErrnoString(syscall.EREMOTEIO))
	assert.Equal(t, "EOPNOTSUPP (operation not supported)", ErrnoString(syscall.EOPNOTSUPP))
	for e, n := range errnoNames {
		assert.True(t, strings.HasPrefix(ErrnoString(e), n+" ("), n)
	}
}

func TestLibraryError(t *testing.T) {
	e := &LibraryError{Library: "libibverbs.so.1", Env: "GDAKI_LIBIBVERBS", Reason: "libibverbs.so.1: cannot open shared object file"}
	assert.ErrorIs(t, fmt.Errorf("x: %w", e), ErrUnavailable)
	assert.Contains(t, e.Error(), "cannot load libibverbs.so.1")
	assert.Contains(t, e.Error(), "GDAKI_LIBIBVERBS")
	s := &LibraryError{Library: "libmlx5.so.1", Symbol: "mlx5dv_is_supported@MLX5_1.8", Since: 22, Reason: "undefined symbol"}
	assert.ErrorIs(t, s, ErrUnavailable)
	assert.Equal(t, "rdma-core unavailable: libmlx5.so.1 lacks mlx5dv_is_supported@MLX5_1.8 (needs rdma-core v22 or newer): undefined symbol", s.Error())
	assert.False(t, errors.Is(errors.New("other"), ErrUnavailable))
	old := &LibraryError{Library: "libc.so.6", Symbol: "ibv_alloc_pd@IBVERBS_1.1", Reason: "undefined symbol"}
	assert.Equal(t, "rdma-core unavailable: libc.so.6 lacks ibv_alloc_pd@IBVERBS_1.1, which every rdma-core release has (is it libibverbs?): undefined symbol", old.Error())
}

func TestMissingSymbolError(t *testing.T) {
	err := missingSymbol("ibv_reg_dmabuf_mr", "ibv_reg_dmabuf_mr", "IBVERBS_1.12", "libibverbs.so.1", 34)
	assert.ErrorIs(t, err, syscall.ENOTSUP)
	assert.Equal(t, "devx: ibv_reg_dmabuf_mr: libibverbs.so.1 lacks ibv_reg_dmabuf_mr@IBVERBS_1.12 (added in rdma-core v34): EOPNOTSUPP (operation not supported)", err.Error())
}

// TestCmdResult checks how the return of a DevX call and the output status
// become errors.
func TestCmdResult(t *testing.T) {
	in := hdr(16, uint64(mlx5.OpCreateQP), 0)
	okOut := make([]byte, 16)
	badParam := make([]byte, 16)
	badParam[0] = byte(mlx5.StatusBadParam)
	mlx5.Set(badParam, mlx5.F(0x20, 32), 0x1234abcd)
	tests := []struct {
		name     string
		rc       int
		out      []byte
		ok       bool
		errnos   []syscall.Errno
		status   mlx5.Status
		syndrome uint32
	}{
		{"success", 0, okOut, true, nil, 0, 0},
		{"firmware rejected", int(syscall.EREMOTEIO), badParam, false, []syscall.Errno{syscall.EREMOTEIO, syscall.EINVAL}, mlx5.StatusBadParam, 0x1234abcd},
		{"kernel rejected", int(syscall.EINVAL), badParam, false, []syscall.Errno{syscall.EINVAL}, mlx5.StatusOK, 0},
		{"kernel refused permission", int(syscall.EPERM), okOut, false, []syscall.Errno{syscall.EPERM}, mlx5.StatusOK, 0},
		{"status without errno", 0, badParam, false, []syscall.Errno{syscall.EREMOTEIO, syscall.EINVAL}, mlx5.StatusBadParam, 0x1234abcd},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := cmdResult("mlx5dv_devx_obj_create", in, tt.out, tt.rc)
			if tt.ok {
				assert.NoError(t, err)
				return
			}
			ce, ok := mlx5.AsCmdError(err)
			require.True(t, ok, "%T is a *mlx5.CmdError", err)
			assert.Equal(t, "mlx5dv_devx_obj_create", ce.Op)
			assert.Equal(t, mlx5.OpCreateQP, ce.Opcode)
			assert.Equal(t, tt.status, ce.Status)
			assert.Equal(t, tt.syndrome, ce.Syndrome)
			for _, e := range tt.errnos {
				assert.ErrorIs(t, err, e)
			}
			assert.Contains(t, err.Error(), "CREATE_QP")
		})
	}
}
