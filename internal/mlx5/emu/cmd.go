package emu

import (
	"fmt"
	"syscall"

	"github.com/gdaki/gpunetio/internal/mlx5"
)

// Header fields of every input mailbox (the PRM command header).
var (
	fOpcode = mlx5.CmdHeaderFields.Opcode
	fUID    = mlx5.CmdHeaderFields.UID
	fTunnel = mlx5.CmdHeaderFields.VHCATunnelID
	fOpMod  = mlx5.CmdHeaderFields.OpMod
)

// cmdSize is the input and output mailbox length firmware requires.
type cmdSize struct{ in, out int }

// cmdSizes holds, per opcode, the mailbox sizes mlx5 defines for it: the
// transitions take their shortest accepted input (mlx5.TransitionFor).
var cmdSizes = func() map[uint16]cmdSize {
	const short = mlx5.CmdShortLen
	m := map[uint16]cmdSize{
		mlx5.OpQueryHCACap:          {mlx5.QueryHCACapInLen, mlx5.QueryHCACapOutLen},
		mlx5.OpCreateCQ:             {mlx5.CreateCQInLen, short},
		mlx5.OpDestroyCQ:            {short, short},
		mlx5.OpQueryCQ:              {short, mlx5.QueryCQOutLen},
		mlx5.OpCreateQP:             {mlx5.CreateQPInLen, short},
		mlx5.OpDestroyQP:            {short, short},
		mlx5.OpQueryQP:              {short, mlx5.QueryQPOutLen},
		mlx5.OpQueryRoCEAddress:     {mlx5.QueryRoCEAddressInLen, mlx5.QueryRoCEAddressOutLen},
		mlx5.OpQueryHCAVportContext: {short, mlx5.QueryHCAVportContextOutLen},
		mlx5.OpQueryNICVportContext: {short, mlx5.QueryNICVportContextOutLen},
		mlx5.OpNOP:                  {short, short},
		mlx5.OpCreateRMP:            {mlx5.CreateRMPInLen, short},
		mlx5.OpQueryRMP:             {short, mlx5.QueryRMPOutLen},
		mlx5.OpDestroyRMP:           {short, short},
		mlx5.OpModifyRMP:            {mlx5.ModifyRMPInLen, short},
	}
	for _, op := range mlx5.Transitions() {
		t, _ := mlx5.TransitionFor(op)
		in := t.Lens[0]
		for _, l := range t.Lens {
			in = min(in, l)
		}
		m[uint16(op)] = cmdSize{in, short}
	}
	return m
}()

// generalWhitelist is the set of opcodes the kernel lets through
// devx_general_cmd.
var generalWhitelist = map[uint16]bool{
	mlx5.OpQueryHCACap: true, mlx5.OpQueryHCAVportContext: true, mlx5.OpQueryRoCEAddress: true,
	mlx5.OpQueryNICVportContext: true, mlx5.OpNOP: true,
}

// kernelErr is a rejection by the (emulated) kernel before firmware runs:
// the output mailbox is untouched.
func kernelErr(op string, in []byte, errno syscall.Errno) error {
	return mlx5.NewCmdError(op, in, nil, errno)
}

// prepare copies in (the kernel copies the mailbox), checks what the
// kernel checks and overwrites the uid.
func (c *devCtx) prepare(op string, in, out []byte) ([]byte, error) {
	if len(in) < mlx5.CmdHeaderLen || len(out) < mlx5.CmdHeaderLen {
		return nil, kernelErr(op, in, syscall.EINVAL)
	}
	if c.closed {
		return nil, kernelErr(op, in, syscall.EBADF)
	}
	if mlx5.Get(in, fTunnel) != 0 {
		return nil, kernelErr(op, in, syscall.EINVAL)
	}
	b := make([]byte, len(in))
	copy(b, in)
	mlx5.Set(b, fUID, uint64(c.uid))
	return b, nil
}

// finish writes the status header and converts a failure to a CmdError.
func finish(op string, in, out []byte, e fwError) error {
	if e == 0 {
		_ = mlx5.OutHeader{}.Encode(out) // out holds at least the header: prepare checked
		return nil
	}
	clear(out)
	_ = mlx5.OutHeader{Status: e.status(), Syndrome: uint32(e)}.Encode(out)
	return mlx5.NewCmdError(op, in, out, syscall.EREMOTEIO)
}

// checkLen applies firmware's mailbox-length rules for opcode op.
func checkLen(op uint16, in, out []byte) fwError {
	s, ok := cmdSizes[op]
	if !ok {
		return fwError(SynBadOpcode)
	}
	if len(in) < s.in {
		return fwError(SynBadInLen)
	}
	if len(out) < s.out {
		return fwError(SynBadOutLen)
	}
	return 0
}

// CreateObj executes a create command (mlx5dv_devx_obj_create).
func (c *devCtx) CreateObj(in, out []byte) (mlx5.Obj, error) {
	const op = "devx_obj_create"
	n := c.nic
	n.mu.Lock()
	defer n.mu.Unlock()
	b, err := c.prepare(op, in, out)
	if err != nil {
		return nil, err
	}
	code := uint16(mlx5.Get(b, fOpcode))
	switch code {
	case mlx5.OpCreateCQ, mlx5.OpCreateQP, mlx5.OpCreateRMP:
	default:
		return nil, kernelErr(op, in, syscall.EINVAL)
	}
	if e := checkLen(code, b, out); e != 0 {
		return nil, finish(op, in, out, e)
	}
	clear(out[:mlx5.CmdShortLen])
	if mlx5.Get(b, fOpMod) != 0 {
		return nil, finish(op, in, out, fwError(SynBadOpMod))
	}
	var e fwError
	var obj *object
	switch code {
	case mlx5.OpCreateCQ:
		mlx5.SetBool(b, fCQUMEMValid, true)
		mlx5.SetBool(b[cqcByte:cqcByte+mlx5.CQCLen], cqf.DBRUMEMValid, true)
		e = c.createCQ(b, out)
		if e == 0 {
			obj = &object{ctx: c, id: mlx5.Get32(out, mlx5.ObjIDField), kind: objCQ}
		}
	case mlx5.OpCreateRMP:
		rb := b[rmpcByte : rmpcByte+mlx5.RMPCLen]
		mlx5.SetBool(rb, wqField(wqf.DBRUMEMValid), true)
		mlx5.SetBool(rb, wqField(wqf.WQUMEMValid), true)
		e = c.createRMP(b, out)
		if e == 0 {
			obj = &object{ctx: c, id: mlx5.Get32(out, mlx5.ObjIDField), kind: objRMP}
		}
	case mlx5.OpCreateQP:
		mlx5.SetBool(b, fWQUMEMValid, true)
		mlx5.SetBool(b[qpcByte:qpcByte+qpcLen], qf.DBRUMEMValid, true)
		e = c.createQP(b, out)
		if e == 0 {
			obj = &object{ctx: c, id: mlx5.Get32(out, mlx5.ObjIDField), kind: objQP}
		}
	}
	if err := finish(op, in, out, e); err != nil {
		return nil, err
	}
	track(obj, "%s 0x%x on %s", obj.kind, obj.id, n.cfg.Name)
	return obj, nil
}

// GeneralCmd executes an object-less command (mlx5dv_devx_general_cmd).
func (c *devCtx) GeneralCmd(in, out []byte) error {
	const op = "devx_general_cmd"
	n := c.nic
	n.mu.RLock()
	defer n.mu.RUnlock()
	b, err := c.prepare(op, in, out)
	if err != nil {
		return err
	}
	code := uint16(mlx5.Get(b, fOpcode))
	if !generalWhitelist[code] {
		return kernelErr(op, in, syscall.EINVAL)
	}
	if e := checkLen(code, b, out); e != 0 {
		return finish(op, in, out, e)
	}
	clear(out[:cmdSizes[code].out])
	return finish(op, in, out, c.general(code, b, out))
}

// general executes an object-less command. Each input is decoded by its
// typed parser of mlx5 over the length firmware reads (checkLen ran, so in
// holds it and the opcode matches: a parser error is not reached).
func (c *devCtx) general(code uint16, in, out []byte) fwError {
	switch code {
	case mlx5.OpNOP:
		cmd, err := mlx5.UnmarshalNOPIn(in[:mlx5.CmdShortLen])
		if err != nil {
			return fwError(SynBadInLen)
		}
		if cmd.OpMod != 0 {
			return fwError(SynBadOpMod)
		}
		return 0
	case mlx5.OpQueryHCACap:
		cmd, err := mlx5.UnmarshalQueryHCACapIn(in[:mlx5.QueryHCACapInLen])
		if err != nil {
			return fwError(SynBadInLen)
		}
		if cmd.OtherFunction || cmd.FunctionID != 0 {
			return fwError(SynOtherFunction)
		}
		t := cmd.CapType()
		if cmd.OpMod>>1 != uint16(t) || c.nic.caps.capability(t) == nil {
			return fwError(SynCapType) // a type past 8 bits, or one this NIC lacks
		}
		var o mlx5.QueryHCACapOut
		if err := c.nic.caps.encode(t, o.Cap[:]); err != nil {
			return fwError(SynCapType)
		}
		_ = o.MarshalTo(out) // fits: checkLen ran
		return 0
	case mlx5.OpQueryRoCEAddress:
		cmd, err := mlx5.UnmarshalQueryRoCEAddressIn(in[:mlx5.QueryRoCEAddressInLen])
		if err != nil {
			return fwError(SynBadInLen)
		}
		if cmd.OpMod != 0 {
			return fwError(SynBadOpMod)
		}
		if cmd.VHCAPortNum > 1 {
			return fwError(SynBadPort)
		}
		if cmd.RoCEAddressIndex != 0 {
			return fwError(SynGIDIndex)
		}
		a := mlx5.RoCEAddr{SourceL3Address: c.nic.gid, RoCEL3Type: mlx5.RoCEL3IPv4, RoCEVersion: mlx5.RoCEv2}
		copy(a.SourceMAC[:], c.nic.mac())
		_ = mlx5.QueryRoCEAddressOut{Addr: a}.MarshalTo(out) // fits: checkLen ran
		return 0
	case mlx5.OpQueryHCAVportContext:
		cmd, err := mlx5.UnmarshalQueryHCAVportContextIn(in[:mlx5.CmdShortLen])
		if err != nil {
			return fwError(SynBadInLen)
		}
		if cmd.OpMod != 0 {
			return fwError(SynBadOpMod)
		}
		if cmd.OtherVport || cmd.VportNumber != 0 {
			return fwError(SynOtherFunction)
		}
		if cmd.PortNum > 1 {
			return fwError(SynBadPort)
		}
		g := nodeGUID(c.nic.cfg.Name)
		// Port LinkUp (5) and ACTIVE (4); lid 0 on RoCE.
		v := mlx5.HCAVportContext{PortPhysicalState: 5, PortState: 4, PortGUID: g, NodeGUID: g}
		_ = mlx5.QueryHCAVportContextOut{Context: v}.MarshalTo(out) // fits: checkLen ran
		return 0
	case mlx5.OpQueryNICVportContext:
		if mlx5.Get(in, fOpMod) != 0 {
			return fwError(SynBadOpMod)
		}
		var v mlx5.NICVportContext
		copy(v.PermanentAddress[:], c.nic.mac())
		_ = mlx5.QueryNICVportContextOut{Context: v}.MarshalTo(out) // fits: checkLen ran
		return 0
	}
	return fwError(SynBadOpcode)
}

// mac is the locally administered MAC derived from the GID's IPv4 address.
func (n *NIC) mac() []byte {
	return []byte{0x02, 0xe0, n.gid[12], n.gid[13], n.gid[14], n.gid[15]}
}

type objKind int

const (
	objCQ objKind = iota
	objQP
	objRMP
)

// object is a DevX object handle (mlx5.Obj).
type object struct {
	ctx  *devCtx
	id   uint32
	kind objKind
	dead bool
}

var _ mlx5.Obj = (*object)(nil)

func (o *object) ID() uint32 { return o.id }

func (o *object) Query(in, out []byte) error {
	const op = "devx_obj_query"
	n := o.ctx.nic
	n.mu.RLock()
	defer n.mu.RUnlock()
	b, err := o.prepare(op, in, out)
	if err != nil {
		return err
	}
	code := uint16(mlx5.Get(b, fOpcode))
	want := map[objKind]uint16{objCQ: mlx5.OpQueryCQ, objQP: mlx5.OpQueryQP, objRMP: mlx5.OpQueryRMP}[o.kind]
	if code != want {
		return kernelErr(op, in, syscall.EINVAL)
	}
	if e := checkLen(code, b, out); e != 0 {
		return finish(op, in, out, e)
	}
	clear(out[:cmdSizes[code].out])
	if mlx5.Get(b, fOpMod) != 0 {
		return finish(op, in, out, fwError(SynBadOpMod))
	}
	switch o.kind {
	case objCQ:
		q := n.cqs[o.id]
		if q == nil || q.ctx != o.ctx {
			return finish(op, in, out, fwError(SynNoCQ))
		}
		q.query(out)
	case objQP:
		q := n.qps[o.id]
		if q == nil || q.ctx != o.ctx {
			return finish(op, in, out, fwError(SynNoQP))
		}
		q.query(out)
	case objRMP:
		r := n.rmps[o.id]
		if r == nil || r.ctx != o.ctx {
			return finish(op, in, out, fwError(SynNoRMP))
		}
		r.query(out)
	}
	return finish(op, in, out, 0)
}

func (o *object) Modify(in, out []byte) error {
	const op = "devx_obj_modify"
	n := o.ctx.nic
	n.mu.RLock()
	b, err := o.prepare(op, in, out)
	if err != nil {
		n.mu.RUnlock()
		return err
	}
	code := uint16(mlx5.Get(b, fOpcode))
	_, isQP := transitionOf(code)
	if o.kind == objRMP && code == mlx5.OpModifyRMP {
		defer n.mu.RUnlock()
		if e := checkLen(code, b, out); e != 0 {
			return finish(op, in, out, e)
		}
		clear(out[:mlx5.CmdShortLen])
		r := n.rmps[o.id]
		if r == nil || r.ctx != o.ctx {
			return finish(op, in, out, fwError(SynNoRMP))
		}
		return finish(op, in, out, r.modify(b))
	}
	if o.kind != objQP || !isQP {
		n.mu.RUnlock()
		return kernelErr(op, in, syscall.EINVAL)
	}
	if e := checkLen(code, b, out); e != 0 {
		n.mu.RUnlock()
		return finish(op, in, out, e)
	}
	clear(out[:mlx5.CmdShortLen])
	var e fwError
	q := n.qps[o.id]
	switch {
	case mlx5.Get(b, fOpMod) != 0:
		e = fwError(SynBadOpMod)
	case q == nil || q.ctx != o.ctx:
		e = fwError(SynNoQP)
	default:
		e = q.modify(code, b)
	}
	n.mu.RUnlock()
	if e == 0 {
		n.kick()
	}
	return finish(op, in, out, e)
}

// prepare applies the kernel's checks of an object command: those of every
// command plus the object id match.
func (o *object) prepare(op string, in, out []byte) ([]byte, error) {
	if o.dead {
		return nil, kernelErr(op, in, syscall.ENOENT)
	}
	b, err := o.ctx.prepare(op, in, out)
	if err != nil {
		return nil, err
	}
	if len(b) < mlx5.ObjIDField.End() || mlx5.Get32(b, mlx5.ObjIDField) != o.id {
		return nil, kernelErr(op, in, syscall.EINVAL)
	}
	return b, nil
}

// Destroy executes DESTROY_CQ / DESTROY_QP, as the kernel does on
// obj_destroy.
func (o *object) Destroy() error {
	const op = "devx_obj_destroy"
	n := o.ctx.nic
	n.mu.Lock()
	defer n.mu.Unlock()
	if o.dead {
		return nil
	}
	in := make([]byte, mlx5.CmdShortLen)
	out := make([]byte, mlx5.CmdShortLen)
	var e fwError
	switch o.kind {
	case objCQ:
		mlx5.Set(in, fOpcode, uint64(mlx5.OpDestroyCQ))
		if q := n.cqs[o.id]; q != nil {
			e = o.ctx.destroyCQ(q)
		}
	case objQP:
		mlx5.Set(in, fOpcode, uint64(mlx5.OpDestroyQP))
		if q := n.qps[o.id]; q != nil {
			e = o.ctx.destroyQP(q)
		}
	case objRMP:
		mlx5.Set(in, fOpcode, uint64(mlx5.OpDestroyRMP))
		if r := n.rmps[o.id]; r != nil {
			e = o.ctx.destroyRMP(r)
		}
	}
	mlx5.Set(in, mlx5.ObjIDField, uint64(o.id))
	if err := finish(op, in, out, e); err != nil {
		return err
	}
	o.dead = true
	n.unsubscribeObj(o.kind, o.id)
	untrack(o)
	return nil
}

func (o *object) String() string { return fmt.Sprintf("emu obj %d", o.id) }
