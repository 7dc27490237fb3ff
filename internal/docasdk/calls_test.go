//go:build cgo

package docasdk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This process runs in SDK mode on the complete fake (TestMain). The table
// below calls every wrapper once or more and compares the lines the fake
// recorded (function, every argument, what it handed back) and the values
// Go got back with what the call should have produced.

// fixture holds the objects the rows work on. pd is an rdma-core struct
// ibv_pd stand-in outside the Go heap, whose first word (ibv_pd.context)
// is ctxAddr.
type fixture struct {
	pd      unsafe.Pointer
	ctxAddr uintptr

	gpu    GPU
	dev    Dev
	vctx   VerbsContext
	vpd    VerbsPD
	umem   UMEM
	gumem  UMEM
	uar    UAR
	cqAttr CQAttr
	cq     CQ
	init   QPInitAttr
	attr   QPAttr
	ah     AHAttr
	qp     QP
}

const fakeIBVContext = 0x7f1234560000

// newPD maps a page for the ibv_pd stand-in.
func newPD(t *testing.T) (unsafe.Pointer, uintptr) {
	t.Helper()
	b, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Munmap(b) })
	binary.LittleEndian.PutUint64(b, fakeIBVContext)
	return unsafe.Pointer(&b[0]), fakeIBVContext
}

// h formats a handle as the fake prints it.
func h(kind string, addr uintptr) string {
	if addr == 0 {
		return "NULL"
	}
	return fmt.Sprintf("%s@%#x", kind, addr)
}

func (f *fixture) G() string   { return h("gpu", f.gpu.Addr()) }
func (f *fixture) D() string   { return h("dev", f.dev.Addr()) }
func (f *fixture) VC() string  { return h("vctx", f.vctx.Addr()) }
func (f *fixture) VP() string  { return h("vpd", f.vpd.Addr()) }
func (f *fixture) U() string   { return h("umem", f.umem.Addr()) }
func (f *fixture) GU() string  { return h("umem", f.gumem.Addr()) }
func (f *fixture) UAR() string { return h("uar", f.uar.Addr()) }
func (f *fixture) CA() string  { return h("cq_attr", f.cqAttr.Addr()) }
func (f *fixture) CQ() string  { return h("cq", f.cq.Addr()) }
func (f *fixture) IA() string  { return h("qp_init_attr", f.init.Addr()) }
func (f *fixture) QA() string  { return h("qp_attr", f.attr.Addr()) }
func (f *fixture) AH() string  { return h("ah_attr", f.ah.Addr()) }
func (f *fixture) QP() string  { return h("qp", f.qp.Addr()) }
func (f *fixture) PD() string  { return fmt.Sprintf("pd=%#x", uintptr(f.pd)) }

// callRow is one call of the table.
type callRow struct {
	fn string // the SDK function the row is about
	// run makes the call and formats what Go got back.
	run func(f *fixture) (string, error)
	// want is what the fake should have recorded and what Go should have
	// got back, computed after run (creators fill the fixture).
	want func(f *fixture) (calls []string, result string)
	// creator: prints the "in use" line; made returns the object.
	made func(f *fixture) interface{ IsZero() bool }
	// noStatus: the SDK function returns a value, not a doca_error_t,
	// so no failure can be injected.
	noStatus bool
	// noHandles: the call takes no handle argument.
	noHandles bool
}

func creator(fn string, run func(f *fixture) error, made func(f *fixture) interface{ IsZero() bool }, args func(f *fixture) string, kind string) callRow {
	return callRow{
		fn:  fn,
		run: func(f *fixture) (string, error) { return "", run(f) },
		want: func(f *fixture) ([]string, string) {
			first := fn
			if a := args(f); a != "" {
				first += " " + a
			}
			return []string{first, fn + " -> " + h(kind, made(f).(interface{ Addr() uintptr }).Addr())}, ""
		},
		made: made,
	}
}

// setter is a row whose call records one line and returns nothing.
func setter(fn string, run func(f *fixture) error, line func(f *fixture) string) callRow {
	return callRow{
		fn:   fn,
		run:  func(f *fixture) (string, error) { return "", run(f) },
		want: func(f *fixture) ([]string, string) { return []string{fn + " " + line(f)}, "" },
	}
}

// getter is a row whose call records one line and returns a value.
func getter(fn string, run func(f *fixture) (string, error), line func(f *fixture) string, result string) callRow {
	return callRow{
		fn:   fn,
		run:  run,
		want: func(f *fixture) ([]string, string) { return []string{fn + " " + line(f)}, result },
	}
}

func value(fn string, run func(f *fixture) (string, error), line func(f *fixture) string, result string) callRow {
	r := getter(fn, run, line, result)
	r.noStatus = true
	return r
}

type zeroer = interface{ IsZero() bool }

func callRows() []callRow {
	gpuMem := uintptr(0x7a0000001000)
	rows := []callRow{
		// GPU.
		creator("doca_gpu_create", func(f *fixture) (err error) { f.gpu, err = GPUCreate("0000:3b:00.0"); return },
			func(f *fixture) zeroer { return f.gpu }, func(*fixture) string { return `bus_id="0000:3b:00.0"` }, "gpu"),
		getter("doca_gpu_mem_alloc", func(f *fixture) (string, error) {
			g, c, err := f.gpu.MemAlloc(4096, 65536, 1)
			return fmt.Sprintf("gpu=%#x cpu=%#x", g, c), err
		}, func(f *fixture) string { return "gpu=" + f.G() + " size=4096 align=65536 type=1" },
			"gpu=0x7a0000001000 cpu=0x7b0000001000"),
		getter("doca_gpu_mem_alloc", func(f *fixture) (string, error) {
			g, c, err := f.gpu.MemAlloc(1<<33, 0, 0)
			return fmt.Sprintf("gpu=%#x cpu=%#x", g, c), err
		}, func(f *fixture) string { return "gpu=" + f.G() + " size=8589934592 align=0 type=0" },
			"gpu=0x7a0200000000 cpu=0x0"),
		setter("doca_gpu_mem_free", func(f *fixture) error { return f.gpu.MemFree(gpuMem) },
			func(f *fixture) string { return "gpu=" + f.G() + " ptr=0x7a0000001000" }),
		getter("doca_gpu_dmabuf_fd", func(f *fixture) (string, error) {
			fd, err := f.gpu.DmabufFD(gpuMem, 4096)
			return fmt.Sprint(fd), err
		}, func(f *fixture) string { return "gpu=" + f.G() + " ptr=0x7a0000001000 size=4096" }, "77"),

		// Device and bridges.
		creator("doca_rdma_bridge_open_dev_from_pd", func(f *fixture) (err error) { f.dev, err = DevOpenFromPD(f.pd); return },
			func(f *fixture) zeroer { return f.dev }, func(f *fixture) string { return f.PD() }, "dev"),
		{
			fn: "doca_rdma_bridge_get_dev_pd",
			run: func(f *fixture) (string, error) {
				pd, err := f.dev.PD()
				return fmt.Sprintf("%#x", uintptr(pd)), err
			},
			want: func(f *fixture) ([]string, string) {
				return []string{"doca_rdma_bridge_get_dev_pd dev=" + f.D(), "doca_rdma_bridge_get_dev_pd -> " + f.PD()},
					fmt.Sprintf("%#x", uintptr(f.pd))
			},
		},
		{
			// The composite: the device's PD, its context, the import.
			fn: "doca_verbs_bridge_verbs_context_import",
			run: func(f *fixture) (string, error) {
				var err error
				f.vctx, err = f.dev.ImportContext()
				return "", err
			},
			want: func(f *fixture) ([]string, string) {
				return []string{
					"doca_rdma_bridge_get_dev_pd dev=" + f.D(), "doca_rdma_bridge_get_dev_pd -> " + f.PD(),
					"doca_verbs_bridge_verbs_context_import context=0x7f1234560000 flags=0",
					"doca_verbs_bridge_verbs_context_import -> " + f.VC(),
				}, ""
			},
		},
		{
			fn: "doca_verbs_bridge_verbs_context_import",
			run: func(f *fixture) (string, error) {
				v, err := ImportVerbsContext(unsafe.Pointer(f.pd), 0xfffffffe)
				return h("vctx", v.Addr()), err
			},
			want: func(f *fixture) ([]string, string) {
				return []string{
					fmt.Sprintf("doca_verbs_bridge_verbs_context_import context=%#x flags=4294967294", uintptr(f.pd)),
					"doca_verbs_bridge_verbs_context_import -> vctx@*",
				}, "vctx@*"
			},
		},
		{
			fn: "doca_verbs_bridge_verbs_pd_import",
			run: func(f *fixture) (string, error) {
				var err error
				f.vpd, err = f.dev.ImportPD()
				return "", err
			},
			want: func(f *fixture) ([]string, string) {
				return []string{
					"doca_rdma_bridge_get_dev_pd dev=" + f.D(), "doca_rdma_bridge_get_dev_pd -> " + f.PD(),
					"doca_verbs_bridge_verbs_pd_import " + f.PD(),
					"doca_verbs_bridge_verbs_pd_import -> " + f.VP(),
				}, ""
			},
		},
		{
			fn: "doca_verbs_bridge_verbs_pd_import",
			run: func(f *fixture) (string, error) {
				v, err := ImportVerbsPD(f.pd)
				return h("vpd", v.Addr()), err
			},
			want: func(f *fixture) ([]string, string) {
				return []string{"doca_verbs_bridge_verbs_pd_import " + f.PD(), "doca_verbs_bridge_verbs_pd_import -> vpd@*"}, "vpd@*"
			},
		},

		// UMEM and UAR.
		creator("doca_umem_create", func(f *fixture) (err error) { f.umem, err = UMEMCreate(f.dev, 0x10000, 8192, 0x7); return },
			func(f *fixture) zeroer { return f.umem },
			func(f *fixture) string { return "dev=" + f.D() + " addr=0x10000 size=8192 access=0x7" }, "umem"),
		creator("doca_umem_gpu_create", func(f *fixture) (err error) {
			f.gumem, err = UMEMGPUCreate(f.gpu, f.dev, gpuMem, 1<<32+4096, 0x8000000f)
			return
		}, func(f *fixture) zeroer { return f.gumem },
			func(f *fixture) string {
				return "gpu=" + f.G() + " dev=" + f.D() + " addr=0x7a0000001000 size=4294971392 access=0x8000000f"
			}, "umem"),
		getter("doca_umem_get_id", func(f *fixture) (string, error) { v, err := f.umem.ID(); return fmt.Sprintf("%#x", v), err },
			func(f *fixture) string { return "umem=" + f.U() }, "0xfeedc0de"),
		getter("doca_umem_get_size", func(f *fixture) (string, error) { v, err := f.gumem.Size(); return fmt.Sprint(v), err },
			func(f *fixture) string { return "umem=" + f.GU() }, "4294971392"),
		getter("doca_umem_get_address", func(f *fixture) (string, error) {
			v, err := f.gumem.Address()
			return fmt.Sprintf("%#x", v), err
		}, func(f *fixture) string { return "umem=" + f.GU() }, "0x7a0000001000"),
		creator("doca_uar_create", func(f *fixture) (err error) { f.uar, err = UARCreate(f.dev, 2); return },
			func(f *fixture) zeroer { return f.uar }, func(f *fixture) string { return "dev=" + f.D() + " type=2" }, "uar"),
		getter("doca_uar_id_get", func(f *fixture) (string, error) { v, err := f.uar.ID(); return fmt.Sprintf("%#x", v), err },
			func(f *fixture) string { return "uar=" + f.UAR() }, "0x80000007"),
		getter("doca_uar_reg_addr_get", func(f *fixture) (string, error) {
			v, err := f.uar.RegAddr()
			return fmt.Sprintf("%#x", v), err
		}, func(f *fixture) string { return "uar=" + f.UAR() }, "0x7c0000000800"),

		// CQ attributes and CQ.
		creator("doca_verbs_cq_attr_create", func(f *fixture) (err error) { f.cqAttr, err = CQAttrCreate(); return },
			func(f *fixture) zeroer { return f.cqAttr }, func(*fixture) string { return "" }, "cq_attr"),
		setter("doca_verbs_cq_attr_set_cq_size", func(f *fixture) error { return f.cqAttr.SetCQSize(256) },
			func(f *fixture) string { return "attr=" + f.CA() + " v=256" }),
		setter("doca_verbs_cq_attr_set_cq_context", func(f *fixture) error { return f.cqAttr.SetCQContext(0xc0ffee) },
			func(f *fixture) string { return "attr=" + f.CA() + " v=0xc0ffee" }),
		setter("doca_verbs_cq_attr_set_external_datapath_en", func(f *fixture) error { return f.cqAttr.SetExternalDatapathEn(true) },
			func(f *fixture) string { return "attr=" + f.CA() + " v=1" }),
		setter("doca_verbs_cq_attr_set_external_umem", func(f *fixture) error { return f.cqAttr.SetExternalUMEM(f.gumem, 1<<40) },
			func(f *fixture) string { return "attr=" + f.CA() + " umem=" + f.GU() + " offset=1099511627776" }),
		setter("doca_verbs_cq_attr_set_external_uar", func(f *fixture) error { return f.cqAttr.SetExternalUAR(f.uar) },
			func(f *fixture) string { return "attr=" + f.CA() + " uar=" + f.UAR() }),
		setter("doca_verbs_cq_attr_set_cq_overrun", func(f *fixture) error { return f.cqAttr.SetCQOverrun(1) },
			func(f *fixture) string { return "attr=" + f.CA() + " v=1" }),
		setter("doca_verbs_cq_attr_set_cq_collapsed", func(f *fixture) error { return f.cqAttr.SetCQCollapsed(false) },
			func(f *fixture) string { return "attr=" + f.CA() + " v=0" }),
		creator("doca_verbs_cq_create", func(f *fixture) (err error) { f.cq, err = CQCreate(f.vctx, f.cqAttr); return },
			func(f *fixture) zeroer { return f.cq },
			func(f *fixture) string { return "context=" + f.VC() + " attr=" + f.CA() }, "cq"),
		value("doca_verbs_cq_get_wq", func(f *fixture) (string, error) {
			b, n, es, err := f.cq.WQ()
			return fmt.Sprintf("%#x %d %d", b, n, es), err
		}, func(f *fixture) string { return "cq=" + f.CQ() }, "0x7d0000000000 256 128"),
		value("doca_verbs_cq_get_dbr_addr", func(f *fixture) (string, error) {
			u, c, a, err := f.cq.DBRAddr()
			return fmt.Sprintf("%#x %#x %#x", u, c, a), err
		}, func(f *fixture) string { return "cq=" + f.CQ() }, "0x7c0000000020 0x7d0000100000 0x7d0000100004"),
		value("doca_verbs_cq_get_cqn", func(f *fixture) (string, error) { v, err := f.cq.CQN(); return fmt.Sprintf("%#x", v), err },
			func(f *fixture) string { return "cq=" + f.CQ() }, "0xabcdef"),

		// QP init attributes.
		creator("doca_verbs_qp_init_attr_create", func(f *fixture) (err error) { f.init, err = QPInitAttrCreate(); return },
			func(f *fixture) zeroer { return f.init }, func(*fixture) string { return "" }, "qp_init_attr"),
		setter("doca_verbs_qp_init_attr_set_pd", func(f *fixture) error { return f.init.SetPD(f.vpd) },
			func(f *fixture) string { return "attr=" + f.IA() + " pd=" + f.VP() }),
		setter("doca_verbs_qp_init_attr_set_send_cq", func(f *fixture) error { return f.init.SetSendCQ(f.cq) },
			func(f *fixture) string { return "attr=" + f.IA() + " cq=" + f.CQ() }),
		setter("doca_verbs_qp_init_attr_set_receive_cq", func(f *fixture) error { return f.init.SetReceiveCQ(f.cq) },
			func(f *fixture) string { return "attr=" + f.IA() + " cq=" + f.CQ() }),
		setter("doca_verbs_qp_init_attr_set_sq_sig_all", func(f *fixture) error { return f.init.SetSQSigAll(true) },
			func(f *fixture) string { return "attr=" + f.IA() + " v=1" }),
		setter("doca_verbs_qp_init_attr_set_sq_wr", func(f *fixture) error { return f.init.SetSQWR(1024) },
			func(f *fixture) string { return "attr=" + f.IA() + " v=1024" }),
		setter("doca_verbs_qp_init_attr_set_rq_wr", func(f *fixture) error { return f.init.SetRQWR(512) },
			func(f *fixture) string { return "attr=" + f.IA() + " v=512" }),
		setter("doca_verbs_qp_init_attr_set_send_max_sges", func(f *fixture) error { return f.init.SetSendMaxSGEs(2) },
			func(f *fixture) string { return "attr=" + f.IA() + " v=2" }),
		setter("doca_verbs_qp_init_attr_set_receive_max_sges", func(f *fixture) error { return f.init.SetReceiveMaxSGEs(3) },
			func(f *fixture) string { return "attr=" + f.IA() + " v=3" }),
		setter("doca_verbs_qp_init_attr_set_max_inline_data", func(f *fixture) error { return f.init.SetMaxInlineData(220) },
			func(f *fixture) string { return "attr=" + f.IA() + " v=220" }),
		setter("doca_verbs_qp_init_attr_set_user_index", func(f *fixture) error { return f.init.SetUserIndex(0x80000001) },
			func(f *fixture) string { return "attr=" + f.IA() + " v=2147483649" }),
		setter("doca_verbs_qp_init_attr_set_qp_type", func(f *fixture) error { return f.init.SetQPType(2) },
			func(f *fixture) string { return "attr=" + f.IA() + " v=2" }),
		setter("doca_verbs_qp_init_attr_set_external_umem", func(f *fixture) error { return f.init.SetExternalUMEM(f.gumem, 4096) },
			func(f *fixture) string { return "attr=" + f.IA() + " umem=" + f.GU() + " offset=4096" }),
		setter("doca_verbs_qp_init_attr_set_external_dbr_umem", func(f *fixture) error { return f.init.SetExternalDBRUMEM(f.umem, 64) },
			func(f *fixture) string { return "attr=" + f.IA() + " umem=" + f.U() + " offset=64" }),
		setter("doca_verbs_qp_init_attr_set_external_datapath_en", func(f *fixture) error { return f.init.SetExternalDatapathEn(true) },
			func(f *fixture) string { return "attr=" + f.IA() + " v=1" }),
		setter("doca_verbs_qp_init_attr_set_external_uar", func(f *fixture) error { return f.init.SetExternalUAR(f.uar) },
			func(f *fixture) string { return "attr=" + f.IA() + " uar=" + f.UAR() }),
		setter("doca_verbs_qp_init_attr_set_qp_context", func(f *fixture) error { return f.init.SetQPContext(0xfeedface12) },
			func(f *fixture) string { return "attr=" + f.IA() + " v=0xfeedface12" }),
		value("doca_verbs_qp_init_attr_get_qp_context", func(f *fixture) (string, error) {
			v, err := f.init.QPContext()
			return fmt.Sprintf("%#x", v), err
		}, func(f *fixture) string { return "attr=" + f.IA() }, "0xfeedface12"),
		setter("doca_verbs_qp_init_attr_set_core_direct_master", func(f *fixture) error { return f.init.SetCoreDirectMaster(false) },
			func(f *fixture) string { return "attr=" + f.IA() + " v=0" }),
		setter("doca_verbs_qp_init_attr_set_send_dbr_mode", func(f *fixture) error { return f.init.SetSendDBRMode(2) },
			func(f *fixture) string { return "attr=" + f.IA() + " v=2" }),
		value("doca_verbs_qp_init_attr_get_send_dbr_mode", func(f *fixture) (string, error) {
			v, err := f.init.SendDBRMode()
			return fmt.Sprint(v), err
		}, func(f *fixture) string { return "attr=" + f.IA() }, "2"),
		setter("doca_verbs_qp_init_attr_set_ordering_semantic", func(f *fixture) error { return f.init.SetOrderingSemantic(1) },
			func(f *fixture) string { return "attr=" + f.IA() + " v=1" }),
		value("doca_verbs_qp_init_attr_get_ordering_semantic", func(f *fixture) (string, error) {
			v, err := f.init.OrderingSemantic()
			return fmt.Sprint(v), err
		}, func(f *fixture) string { return "attr=" + f.IA() }, "1"),

		// AH attributes.
		creator("doca_verbs_ah_attr_create", func(f *fixture) (err error) { f.ah, err = AHAttrCreate(f.vctx); return },
			func(f *fixture) zeroer { return f.ah }, func(f *fixture) string { return "context=" + f.VC() }, "ah_attr"),
		setter("doca_verbs_ah_attr_set_gid", func(f *fixture) error {
			return f.ah.SetGID([16]byte{0xfe, 0x80, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 0xee, 0xff})
		}, func(f *fixture) string { return "ah=" + f.AH() + " v=fe8002030405060708090a0b0c0deeff" }),
		setter("doca_verbs_ah_attr_set_addr_type", func(f *fixture) error { return f.ah.SetAddrType(1) },
			func(f *fixture) string { return "ah=" + f.AH() + " v=1" }),
		setter("doca_verbs_ah_attr_set_dlid", func(f *fixture) error { return f.ah.SetDLID(0xfffe1) },
			func(f *fixture) string { return "ah=" + f.AH() + " v=1048545" }),
		setter("doca_verbs_ah_attr_set_sl", func(f *fixture) error { return f.ah.SetSL(15) },
			func(f *fixture) string { return "ah=" + f.AH() + " v=15" }),
		setter("doca_verbs_ah_attr_set_sgid_index", func(f *fixture) error { return f.ah.SetSGIDIndex(3) },
			func(f *fixture) string { return "ah=" + f.AH() + " v=3" }),
		setter("doca_verbs_ah_attr_set_static_rate", func(f *fixture) error { return f.ah.SetStaticRate(9) },
			func(f *fixture) string { return "ah=" + f.AH() + " v=9" }),
		setter("doca_verbs_ah_attr_set_hop_limit", func(f *fixture) error { return f.ah.SetHopLimit(255) },
			func(f *fixture) string { return "ah=" + f.AH() + " v=255" }),
		setter("doca_verbs_ah_attr_set_traffic_class", func(f *fixture) error { return f.ah.SetTrafficClass(0xa0) },
			func(f *fixture) string { return "ah=" + f.AH() + " v=160" }),

		// QP attributes.
		creator("doca_verbs_qp_attr_create", func(f *fixture) (err error) { f.attr, err = QPAttrCreate(); return },
			func(f *fixture) zeroer { return f.attr }, func(*fixture) string { return "" }, "qp_attr"),
		setter("doca_verbs_qp_attr_set_next_state", func(f *fixture) error { return f.attr.SetNextState(1) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=1" }),
		setter("doca_verbs_qp_attr_set_current_state", func(f *fixture) error { return f.attr.SetCurrentState(2) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=2" }),
		value("doca_verbs_qp_attr_get_current_state", func(f *fixture) (string, error) {
			v, err := f.attr.CurrentState()
			return fmt.Sprint(v), err
		}, func(f *fixture) string { return "attr=" + f.QA() }, "2"),
		setter("doca_verbs_qp_attr_set_path_mtu", func(f *fixture) error { return f.attr.SetPathMTU(5) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=5" }),
		setter("doca_verbs_qp_attr_set_rq_psn", func(f *fixture) error { return f.attr.SetRQPSN(0xabcdef) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=11259375" }),
		setter("doca_verbs_qp_attr_set_sq_psn", func(f *fixture) error { return f.attr.SetSQPSN(0xfffffe) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=16777214" }),
		setter("doca_verbs_qp_attr_set_dest_qp_num", func(f *fixture) error { return f.attr.SetDestQPNum(0xfedcba) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=16702650" }),
		setter("doca_verbs_qp_attr_set_allow_remote_write", func(f *fixture) error { return f.attr.SetAllowRemoteWrite(true) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=1" }),
		setter("doca_verbs_qp_attr_set_allow_remote_read", func(f *fixture) error { return f.attr.SetAllowRemoteRead(false) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=0" }),
		setter("doca_verbs_qp_attr_set_atomic_mode", func(f *fixture) error { return f.attr.SetAtomicMode(8) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=8" }),
		setter("doca_verbs_qp_attr_set_ah_attr", func(f *fixture) error { return f.attr.SetAHAttr(f.ah) },
			func(f *fixture) string { return "attr=" + f.QA() + " ah=" + f.AH() }),
		setter("doca_verbs_qp_attr_set_pkey_index", func(f *fixture) error { return f.attr.SetPKeyIndex(0xffff) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=65535" }),
		setter("doca_verbs_qp_attr_set_port_num", func(f *fixture) error { return f.attr.SetPortNum(1) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=1" }),
		setter("doca_verbs_qp_attr_set_ack_timeout", func(f *fixture) error { return f.attr.SetAckTimeout(14) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=14" }),
		setter("doca_verbs_qp_attr_set_retry_cnt", func(f *fixture) error { return f.attr.SetRetryCnt(7) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=7" }),
		setter("doca_verbs_qp_attr_set_rnr_retry", func(f *fixture) error { return f.attr.SetRNRRetry(0x8001) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=32769" }),
		setter("doca_verbs_qp_attr_set_min_rnr_timer", func(f *fixture) error { return f.attr.SetMinRNRTimer(12) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=12" }),
		setter("doca_verbs_qp_attr_set_max_rd_atomic", func(f *fixture) error { return f.attr.SetMaxRDAtomic(16) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=16" }),
		setter("doca_verbs_qp_attr_set_max_dest_rd_atomic", func(f *fixture) error { return f.attr.SetMaxDestRDAtomic(255) },
			func(f *fixture) string { return "attr=" + f.QA() + " v=255" }),

		// QP.
		creator("doca_verbs_qp_create", func(f *fixture) (err error) { f.qp, err = QPCreate(f.vctx, f.init); return },
			func(f *fixture) zeroer { return f.qp },
			func(f *fixture) string { return "context=" + f.VC() + " attr=" + f.IA() }, "qp"),
		setter("doca_verbs_qp_modify", func(f *fixture) error { return f.qp.Modify(f.attr, 0x18001) },
			func(f *fixture) string { return "qp=" + f.QP() + " attr=" + f.QA() + " mask=0x18001" }),
		getter("doca_verbs_qp_query", func(f *fixture) (string, error) {
			m, err := f.qp.Query(f.attr, f.init)
			return fmt.Sprintf("%#x", m), err
		}, func(f *fixture) string {
			return "qp=" + f.QP() + " attr=" + f.QA() + " init_attr=" + f.IA() + " mask=out"
		}, "0x1234"),
		value("doca_verbs_qp_attr_get_current_state", func(f *fixture) (string, error) {
			v, err := f.attr.CurrentState()
			return fmt.Sprint(v), err
		}, func(f *fixture) string { return "attr=" + f.QA() }, "3"),
		value("doca_verbs_qp_get_wq", func(f *fixture) (string, error) {
			w, err := f.qp.WQ()
			return fmt.Sprintf("%#x %d %#x %d %d", w.SQ, w.SQEntries, w.RQ, w.RQEntries, w.RWQESize), err
		}, func(f *fixture) string { return "qp=" + f.QP() }, "0x7e0000000000 1024 0x7e0000100000 512 64"),
		value("doca_verbs_qp_get_dbr_addr", func(f *fixture) (string, error) {
			v, err := f.qp.DBRAddr()
			return fmt.Sprintf("%#x", v), err
		}, func(f *fixture) string { return "qp=" + f.QP() }, "0x7e0000200000"),
		value("doca_verbs_qp_get_uar_addr", func(f *fixture) (string, error) {
			v, err := f.qp.UARAddr()
			return fmt.Sprintf("%#x", v), err
		}, func(f *fixture) string { return "qp=" + f.QP() }, "0x7c0000000800"),
		value("doca_verbs_qp_get_qpn", func(f *fixture) (string, error) { v, err := f.qp.QPN(); return fmt.Sprintf("%#x", v), err },
			func(f *fixture) string { return "qp=" + f.QP() }, "0xfedcba"),

		// Destroyers, in reverse order of creation.
		destroyer("doca_verbs_qp_destroy", "qp", func(f *fixture) error { return f.qp.Destroy() }, func(f *fixture) string { return f.QP() }),
		destroyer("doca_verbs_qp_attr_destroy", "attr", func(f *fixture) error { return f.attr.Destroy() }, func(f *fixture) string { return f.QA() }),
		destroyer("doca_verbs_ah_attr_destroy", "ah", func(f *fixture) error { return f.ah.Destroy() }, func(f *fixture) string { return f.AH() }),
		destroyer("doca_verbs_qp_init_attr_destroy", "attr", func(f *fixture) error { return f.init.Destroy() }, func(f *fixture) string { return f.IA() }),
		destroyer("doca_verbs_cq_destroy", "cq", func(f *fixture) error { return f.cq.Destroy() }, func(f *fixture) string { return f.CQ() }),
		destroyer("doca_verbs_cq_attr_destroy", "attr", func(f *fixture) error { return f.cqAttr.Destroy() }, func(f *fixture) string { return f.CA() }),
		destroyer("doca_uar_destroy", "uar", func(f *fixture) error { return f.uar.Destroy() }, func(f *fixture) string { return f.UAR() }),
		destroyer("doca_umem_destroy", "umem", func(f *fixture) error { return f.gumem.Destroy() }, func(f *fixture) string { return f.GU() }),
		destroyer("doca_umem_destroy", "umem", func(f *fixture) error { return f.umem.Destroy() }, func(f *fixture) string { return f.U() }),
		destroyer("doca_dev_close", "dev", func(f *fixture) error { return f.dev.Close() }, func(f *fixture) string { return f.D() }),
		destroyer("doca_gpu_destroy", "gpu", func(f *fixture) error { return f.gpu.Destroy() }, func(f *fixture) string { return f.G() }),
	}
	for i := range rows {
		switch rows[i].fn {
		case "doca_gpu_create", "doca_verbs_cq_attr_create", "doca_verbs_qp_init_attr_create", "doca_verbs_qp_attr_create":
			rows[i].noHandles = true
		}
	}
	return rows
}

// destroyer is a row that destroys an object: the fake records the handle,
// which the fixture no longer holds afterwards, so the line is computed
// before the call.
func destroyer(fn, argName string, run func(f *fixture) error, handle func(f *fixture) string) callRow {
	var before string
	return callRow{
		fn: fn,
		run: func(f *fixture) (string, error) {
			before = handle(f)
			return "", run(f)
		},
		want: func(f *fixture) ([]string, string) {
			return []string{fn + " " + argName + "=" + before}, ""
		},
	}
}

// matches compares a wanted line with a recorded one; a wanted "<kind>@*"
// at the end matches any handle of that kind.
func matches(want, got string) bool {
	if p, ok := strings.CutSuffix(want, "@*"); ok {
		return strings.HasPrefix(got, p+"@0x") && len(got) > len(p)+3
	}
	return want == got
}

func assertLines(t *testing.T, want, got []string, msg string) {
	t.Helper()
	ok := len(want) == len(got)
	for i := 0; ok && i < len(want); i++ {
		ok = matches(want[i], got[i])
	}
	if !ok {
		assert.Equal(t, want, got, msg)
	}
}

func inUseLine() Message {
	return warn("Env var DOCA_SDK_LIB_PATH set to " + fake.full() + ". DOCA SDK is in use")
}

func TestParentDecision(t *testing.T) {
	f := needFake(t)
	d := Current()
	require.Equal(t, SDK, d.Mode, d.Reason)
	assert.True(t, Active())
	assert.Equal(t, f.full(), d.Dir)
	assert.True(t, d.EnvSet)
	assert.Empty(t, d.Log)
	assert.True(t, d.SetOrderingSemantic && d.GetOrderingSemantic)
	d.Libraries[0], d.Log = "changed", append(d.Log, Message{})
	assert.Equal(t, f.full()+"/"+LibCommon, Current().Libraries[0], "Current returns a copy")
	assert.Empty(t, Current().Log)
}

// Every wrapper reaches the fake with the right arguments, and Go gets back
// what the fake handed out.
func TestCalls(t *testing.T) {
	needFake(t)
	f := &fixture{}
	f.pd, f.ctxAddr = newPD(t)
	for i, row := range callRows() {
		t.Run(fmt.Sprintf("%02d_%s", i, row.fn), func(t *testing.T) {
			calls, logs := parentLog.mark(), captured.mark()
			got, err := row.run(f)
			require.NoError(t, err)
			wantCalls, wantResult := row.want(f)
			assertLines(t, wantCalls, parentLog.since(calls), "the calls the fake recorded")
			assert.True(t, matches(wantResult, got), "result %q, want %q", got, wantResult)
			var wantLog []Message
			if row.made != nil {
				assert.False(t, row.made(f).IsZero())
				wantLog = []Message{inUseLine()}
			}
			assert.Equal(t, wantLog, captured.since(logs), "lines logged")
		})
	}
	assert.Equal(t, fixture{pd: f.pd, ctxAddr: f.ctxAddr, vctx: f.vctx, vpd: f.vpd}, *f,
		"every Destroy and Close cleared its handle")
}

// newFixture makes one object of every kind through the wrappers.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{}
	f.pd, f.ctxAddr = newPD(t)
	var err error
	f.gpu, err = GPUCreate("0000:01:00.0")
	require.NoError(t, err)
	f.dev, err = DevOpenFromPD(f.pd)
	require.NoError(t, err)
	f.vctx, err = f.dev.ImportContext()
	require.NoError(t, err)
	f.vpd, err = f.dev.ImportPD()
	require.NoError(t, err)
	f.umem, err = UMEMCreate(f.dev, 0x1000, 4096, 1)
	require.NoError(t, err)
	f.gumem, err = UMEMGPUCreate(f.gpu, f.dev, 0x7a0000001000, 4096, 1)
	require.NoError(t, err)
	f.uar, err = UARCreate(f.dev, 0)
	require.NoError(t, err)
	f.cqAttr, err = CQAttrCreate()
	require.NoError(t, err)
	f.cq, err = CQCreate(f.vctx, f.cqAttr)
	require.NoError(t, err)
	f.init, err = QPInitAttrCreate()
	require.NoError(t, err)
	f.attr, err = QPAttrCreate()
	require.NoError(t, err)
	f.ah, err = AHAttrCreate(f.vctx)
	require.NoError(t, err)
	f.qp, err = QPCreate(f.vctx, f.init)
	require.NoError(t, err)
	return f
}

// setFail makes the fake fail as spec says ("fn=code") until the test ends.
func setFail(t *testing.T, spec string) {
	t.Helper()
	require.NoError(t, os.Setenv("FAKE_DOCA_FAIL", spec))
	t.Cleanup(func() { os.Unsetenv("FAKE_DOCA_FAIL") })
}

// A failing SDK call returns an *Error naming the function and the code,
// prints the reference's ERR line, and hands back no object.
func TestCallFailures(t *testing.T) {
	needFake(t)
	for i, row := range callRows() {
		if row.noStatus {
			continue
		}
		t.Run(fmt.Sprintf("%02d_%s", i, row.fn), func(t *testing.T) {
			f := newFixture(t)
			code := Code(21 + i%10) // DRIVER .. DEVICE_FATAL_ERROR
			setFail(t, row.fn+"="+fmt.Sprint(int32(code)))
			calls, logs := parentLog.mark(), captured.mark()
			_, err := row.run(f)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, &Error{Func: row.fn, Code: code, FromSDK: true}, e)
			assert.ErrorIs(t, err, code)
			assert.Equal(t, fmt.Sprintf("%s: the DOCA SDK returned %s (%d)", row.fn, code.Name(), int32(code)), err.Error())
			assert.Equal(t, []Message{errm(fmt.Sprintf("DOCA SDK function in %s returned error %d", row.fn, int32(code)))},
				captured.since(logs))
			got := parentLog.since(calls)
			require.NotEmpty(t, got)
			assert.Equal(t, fmt.Sprintf("%s -> error %d (injected)", row.fn, int32(code)), got[len(got)-1])
			if row.made != nil {
				assert.True(t, row.made(f).IsZero(), "no object from a failed creator (the fake left garbage in its output)")
			}
		})
	}
}

// Getters hand back zero values, not what a failing SDK left in the
// outputs, and a code outside DOCA's range is named by number.
func TestFailureOutputsZero(t *testing.T) {
	needFake(t)
	f := newFixture(t)
	setFail(t, "doca_gpu_mem_alloc=1000,doca_gpu_dmabuf_fd=6,doca_umem_get_id=6,doca_umem_get_size=6,doca_umem_get_address=6,doca_uar_reg_addr_get=6,doca_verbs_qp_query=6,doca_rdma_bridge_get_dev_pd=6")
	g, c, err := f.gpu.MemAlloc(64, 0, 1)
	assert.Equal(t, [2]uintptr{0, 0}, [2]uintptr{g, c})
	assert.EqualError(t, err, "doca_gpu_mem_alloc: the DOCA SDK returned DOCA_ERROR_1000 (1000)")
	fd, err := f.gpu.DmabufFD(0x1000, 64)
	assert.Equal(t, -1, fd)
	assert.ErrorIs(t, err, CodeInvalidValue)
	id, err := f.umem.ID()
	assert.Zero(t, id)
	assert.Error(t, err)
	size, err := f.umem.Size()
	assert.Zero(t, size)
	assert.Error(t, err)
	addr, err := f.umem.Address()
	assert.Zero(t, addr)
	assert.Error(t, err)
	addr, err = f.uar.RegAddr()
	assert.Zero(t, addr)
	assert.Error(t, err)
	mask, err := f.qp.Query(f.attr, f.init)
	assert.Zero(t, mask)
	assert.Error(t, err)
	pd, err := f.dev.PD()
	assert.Nil(t, pd)
	assert.Error(t, err)
	v, err := f.dev.ImportContext()
	assert.True(t, v.IsZero())
	assert.Equal(t, "doca_rdma_bridge_get_dev_pd", err.(*Error).Func, "the composite names the step that failed")
}

// A creator that returns DOCA_SUCCESS without an object is an error.
func TestCreatorsWithoutObject(t *testing.T) {
	needFake(t)
	rows := callRows()
	rows = append(rows,
		callRow{fn: "doca_verbs_bridge_verbs_context_import", made: func(*fixture) zeroer { return VerbsContext{} },
			run: func(f *fixture) (string, error) { _, err := f.dev.ImportContext(); return "", err }},
		callRow{fn: "doca_verbs_bridge_verbs_pd_import", made: func(*fixture) zeroer { return VerbsPD{} },
			run: func(f *fixture) (string, error) { _, err := f.dev.ImportPD(); return "", err }})
	n := 0
	for i, row := range rows {
		if row.made == nil {
			continue
		}
		n++
		t.Run(fmt.Sprintf("%02d_%s", i, row.fn), func(t *testing.T) {
			f := newFixture(t)
			setFail(t, row.fn+"=null")
			logs := captured.mark()
			_, err := row.run(f)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, &Error{Func: row.fn, Code: CodeUnexpected, Err: ErrNoObject}, e)
			assert.ErrorIs(t, err, ErrNoObject)
			assert.True(t, row.made(f).IsZero())
			assert.Empty(t, captured.since(logs), "no in-use line")
		})
	}
	assert.Equal(t, 13, n, "the 11 creators and the 2 imports")
}

// A zero handle is refused before the SDK is called.
func TestNilHandles(t *testing.T) {
	needFake(t)
	for i, row := range callRows() {
		if row.noHandles {
			continue
		}
		t.Run(fmt.Sprintf("%02d_%s", i, row.fn), func(t *testing.T) {
			f := &fixture{}
			calls, logs := parentLog.mark(), captured.mark()
			_, err := row.run(f)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.ErrorIs(t, err, ErrNilHandle)
			assert.ErrorIs(t, err, CodeInvalidValue)
			assert.False(t, e.FromSDK)
			assert.Contains(t, err.Error(), ": DOCA_ERROR_INVALID_VALUE: not called: nil handle: argument ")
			assert.Empty(t, parentLog.since(calls), "the SDK was not called")
			assert.Empty(t, captured.since(logs))
		})
	}
	// A handle with a nil context: the import is refused, naming it.
	f := newFixture(t)
	pd := (*[8]byte)(f.pd)
	*pd = [8]byte{}
	_, err := f.dev.ImportContext()
	assert.EqualError(t, err, "doca_verbs_bridge_verbs_context_import: DOCA_ERROR_INVALID_VALUE: not called: nil handle: argument context")
	// Destroy through a nil pointer.
	var g *GPU
	assert.ErrorIs(t, g.Destroy(), ErrNilHandle)
	var d *Dev
	assert.ErrorIs(t, d.Close(), ErrNilHandle)
}

// Destroy clears the variable, so a second Destroy never reaches the SDK.
func TestDestroyTwice(t *testing.T) {
	needFake(t)
	f := newFixture(t)
	calls := parentLog.mark()
	require.NoError(t, f.qp.Destroy())
	assert.True(t, f.qp.IsZero())
	assert.ErrorIs(t, f.qp.Destroy(), ErrNilHandle)
	assert.Len(t, parentLog.since(calls), 1)

	// A failed destroy clears it too.
	setFail(t, "doca_verbs_cq_destroy=18")
	assert.ErrorIs(t, f.cq.Destroy(), Code(18))
	assert.True(t, f.cq.IsZero())
}

// The table covers every wrapped entry point.
func TestCallsCoverEverySymbol(t *testing.T) {
	covered := map[string]bool{}
	for _, r := range callRows() {
		covered[r.fn] = true
	}
	var missing, extra []string
	for i, s := range symbols {
		if resolvedOnly[sym(i)] {
			assert.False(t, covered[s.name], "%s is not wrapped", s.name)
			continue
		}
		if !covered[s.name] {
			missing = append(missing, s.name)
		}
		delete(covered, s.name)
	}
	for n := range covered {
		extra = append(extra, n)
	}
	sort.Strings(extra)
	assert.Empty(t, missing, "entry points without a row")
	assert.Empty(t, extra, "rows for unknown entry points")
}

// No handle type converts into another: an SDK CQ cannot become a QP.
func TestHandleTypesDistinct(t *testing.T) {
	types := []reflect.Type{
		reflect.TypeOf(GPU{}), reflect.TypeOf(Dev{}), reflect.TypeOf(UMEM{}), reflect.TypeOf(UAR{}),
		reflect.TypeOf(CQAttr{}), reflect.TypeOf(CQ{}), reflect.TypeOf(QPInitAttr{}), reflect.TypeOf(QPAttr{}),
		reflect.TypeOf(AHAttr{}), reflect.TypeOf(QP{}), reflect.TypeOf(VerbsContext{}), reflect.TypeOf(VerbsPD{}),
	}
	for _, a := range types {
		for _, b := range types {
			if a != b {
				assert.False(t, a.ConvertibleTo(b), "%v converts to %v", a, b)
			}
		}
	}
}

// The call errors in open mode say why the SDK is not active; checked in
// a child (TestModeUnset) since this process is in SDK mode. Here: the
// error value itself.
func TestErrorStrings(t *testing.T) {
	e := &Error{Func: "doca_verbs_qp_modify", Code: 18, FromSDK: true}
	assert.Equal(t, "doca_verbs_qp_modify: the DOCA SDK returned DOCA_ERROR_BAD_STATE (18)", e.Error())
	assert.NoError(t, e.Unwrap())
	assert.True(t, errors.Is(e, Code(18)))
	assert.False(t, errors.Is(e, Code(6)))
	r := refused(symQPModify, CodeInvalidValue, ErrNilHandle)
	assert.Equal(t, "doca_verbs_qp_modify: DOCA_ERROR_INVALID_VALUE: not called: nil handle", r.Error())
	assert.ErrorIs(t, r, ErrNilHandle)
}
