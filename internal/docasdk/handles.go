package docasdk

import "unsafe"

// SDK objects are opaque C pointers owned by the SDK. Each kind has its own
// Go type, and each type's field has its own name, so the types are not
// convertible into one another: an SDK CQ cannot be passed, or converted,
// where a QP is expected. Only this package can make a non-zero handle. The
// zero value is "no object"; passing it returns ErrNilHandle.
//
// Handles are plain values: copies refer to the same SDK object. Destroy
// (Close for Dev) clears the variable it is called on, so a second Destroy
// through it is refused instead of reaching the SDK; other copies are the
// caller's to forget.

// GPU is an SDK struct doca_gpu.
type GPU struct{ gpu unsafe.Pointer }

// Dev is an SDK struct doca_dev (opened from an rdma-core PD).
type Dev struct{ dev unsafe.Pointer }

// UMEM is an SDK struct doca_umem.
type UMEM struct{ umem unsafe.Pointer }

// UAR is an SDK struct doca_uar.
type UAR struct{ uar unsafe.Pointer }

// CQAttr is an SDK struct doca_verbs_cq_attr.
type CQAttr struct{ cqAttr unsafe.Pointer }

// CQ is an SDK struct doca_verbs_cq.
type CQ struct{ cq unsafe.Pointer }

// QPInitAttr is an SDK struct doca_verbs_qp_init_attr.
type QPInitAttr struct{ qpInitAttr unsafe.Pointer }

// QPAttr is an SDK struct doca_verbs_qp_attr.
type QPAttr struct{ qpAttr unsafe.Pointer }

// AHAttr is an SDK struct doca_verbs_ah_attr.
type AHAttr struct{ ahAttr unsafe.Pointer }

// QP is an SDK struct doca_verbs_qp.
type QP struct{ qp unsafe.Pointer }

// VerbsContext is an SDK verbs context imported from an rdma-core
// struct ibv_context (doca_verbs_bridge_verbs_context_import). The SDK
// exports no call that releases it: import one per Dev and keep it.
type VerbsContext struct{ vctx unsafe.Pointer }

// VerbsPD is an SDK verbs PD imported from an rdma-core struct ibv_pd
// (doca_verbs_bridge_verbs_pd_import). Like VerbsContext, it is never
// released.
type VerbsPD struct{ vpd unsafe.Pointer }

// IsZero reports whether g holds no object.
func (g GPU) IsZero() bool { return g.gpu == nil }

// Addr is the SDK object's address, for log lines.
func (g GPU) Addr() uintptr { return uintptr(g.gpu) }

// IsZero reports whether d holds no object.
func (d Dev) IsZero() bool { return d.dev == nil }

// Addr is the SDK object's address, for log lines.
func (d Dev) Addr() uintptr { return uintptr(d.dev) }

// IsZero reports whether u holds no object.
func (u UMEM) IsZero() bool { return u.umem == nil }

// Addr is the SDK object's address, for log lines.
func (u UMEM) Addr() uintptr { return uintptr(u.umem) }

// IsZero reports whether u holds no object.
func (u UAR) IsZero() bool { return u.uar == nil }

// Addr is the SDK object's address, for log lines.
func (u UAR) Addr() uintptr { return uintptr(u.uar) }

// IsZero reports whether a holds no object.
func (a CQAttr) IsZero() bool { return a.cqAttr == nil }

// Addr is the SDK object's address, for log lines.
func (a CQAttr) Addr() uintptr { return uintptr(a.cqAttr) }

// IsZero reports whether c holds no object.
func (c CQ) IsZero() bool { return c.cq == nil }

// Addr is the SDK object's address, for log lines.
func (c CQ) Addr() uintptr { return uintptr(c.cq) }

// IsZero reports whether a holds no object.
func (a QPInitAttr) IsZero() bool { return a.qpInitAttr == nil }

// Addr is the SDK object's address, for log lines.
func (a QPInitAttr) Addr() uintptr { return uintptr(a.qpInitAttr) }

// IsZero reports whether a holds no object.
func (a QPAttr) IsZero() bool { return a.qpAttr == nil }

// Addr is the SDK object's address, for log lines.
func (a QPAttr) Addr() uintptr { return uintptr(a.qpAttr) }

// IsZero reports whether a holds no object.
func (a AHAttr) IsZero() bool { return a.ahAttr == nil }

// Addr is the SDK object's address, for log lines.
func (a AHAttr) Addr() uintptr { return uintptr(a.ahAttr) }

// IsZero reports whether q holds no object.
func (q QP) IsZero() bool { return q.qp == nil }

// Addr is the SDK object's address, for log lines.
func (q QP) Addr() uintptr { return uintptr(q.qp) }

// IsZero reports whether v holds no object.
func (v VerbsContext) IsZero() bool { return v.vctx == nil }

// Addr is the SDK object's address, for log lines.
func (v VerbsContext) Addr() uintptr { return uintptr(v.vctx) }

// IsZero reports whether v holds no object.
func (v VerbsPD) IsZero() bool { return v.vpd == nil }

// Addr is the SDK object's address, for log lines.
func (v VerbsPD) Addr() uintptr { return uintptr(v.vpd) }
