package verbs

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestResetLeavesExternalRingsAlone moves a QP whose rings and DBR live in
// an external UMEM back to RST and checks that verbs neither stores to that
// memory nor needs it writable: the memory belongs to its owner, and for a
// QP exported to a GPU it is device memory the host cannot touch (the GPU
// suite crashed on exactly that). The ring is read-only during the
// transition; a store would fault.
func TestResetLeavesExternalRingsAlone(t *testing.T) {
	f := newFixture(t, "emu0")
	u := f.umem(t)
	for i := range f.buf {
		f.buf[i] = 0xA5
	}
	qp, err := NewQP(f.ctx, QPConfig{PD: f.pd, SendCQ: f.cq, RecvCQ: f.cq, SQWR: 16, RQWR: 16, SendMaxSGE: 1, RecvMaxSGE: 1,
		UMem: u, DBRUMem: u, DBRUMemOffset: 1 << 15})
	require.NoError(t, err)
	defer func() { require.NoError(t, qp.Close()) }()
	require.NoError(t, qp.Modify(&QPAttr{NextState: QPStateINIT, PortNum: 1, AllowRemoteWrite: true},
		QPAttrNextState|QPAttrPortNum|QPAttrPKeyIndex|QPAttrAllowRemoteWrite|QPAttrAllowRemoteRead))
	before := append([]byte(nil), f.buf...)

	require.NoError(t, syscall.Mprotect(f.buf, syscall.PROT_READ))
	err = qp.Modify(&QPAttr{NextState: QPStateRST}, QPAttrNextState)
	require.NoError(t, syscall.Mprotect(f.buf, syscall.PROT_READ|syscall.PROT_WRITE))
	require.NoError(t, err)
	require.Equal(t, before, f.buf, "the external rings and DBR are the owner's")
	require.Equal(t, QPStateRST, qp.State())
}
