package docasdk

import "unsafe"

// AHAttrCreate creates address handle attributes on an imported verbs
// context: doca_verbs_ah_attr_create.
func AHAttrCreate(vctx VerbsContext) (AHAttr, error) {
	p, err := create(symAHAttrCreate, func(out *unsafe.Pointer) int32 {
		return tPOut(symAHAttrCreate, vctx.vctx, out)
	}, arg{"context", vctx.vctx})
	return AHAttr{p}, err
}

// Destroy releases the attributes (doca_verbs_ah_attr_destroy) and clears a.
func (a *AHAttr) Destroy() error {
	if a == nil {
		return refused(symAHAttrDestroy, CodeInvalidValue, ErrNilHandle)
	}
	return destroy(symAHAttrDestroy, "ah_attr", &a.ahAttr)
}

func (a AHAttr) handleArg() arg { return arg{"ah_attr", a.ahAttr} }

// SetGID sets the remote GID (struct doca_verbs_gid, passed by value):
// doca_verbs_ah_attr_set_gid.
func (a AHAttr) SetGID(gid [16]byte) error {
	s := symAHAttrSetGID
	if err := begin(s, a.handleArg()); err != nil {
		return err
	}
	return status(s, tAHSetGID(s, a.ahAttr, &gid))
}

// SetAddrType sets enum doca_verbs_addr_type:
// doca_verbs_ah_attr_set_addr_type.
func (a AHAttr) SetAddrType(t uint32) error {
	return setInt(symAHAttrSetAddrType, a.handleArg(), int32(t))
}

// SetDLID sets the destination LID: doca_verbs_ah_attr_set_dlid.
func (a AHAttr) SetDLID(v uint32) error { return setU32(symAHAttrSetDLID, a.handleArg(), v) }

// SetSL sets the service level: doca_verbs_ah_attr_set_sl.
func (a AHAttr) SetSL(v uint8) error { return setU8(symAHAttrSetSL, a.handleArg(), v) }

// SetSGIDIndex sets the source GID index: doca_verbs_ah_attr_set_sgid_index.
func (a AHAttr) SetSGIDIndex(v uint8) error {
	return setU8(symAHAttrSetSGIDIndex, a.handleArg(), v)
}

// SetStaticRate sets the static rate: doca_verbs_ah_attr_set_static_rate.
func (a AHAttr) SetStaticRate(v uint8) error {
	return setU8(symAHAttrSetStaticRate, a.handleArg(), v)
}

// SetHopLimit sets the hop limit: doca_verbs_ah_attr_set_hop_limit.
func (a AHAttr) SetHopLimit(v uint8) error { return setU8(symAHAttrSetHopLimit, a.handleArg(), v) }

// SetTrafficClass sets the traffic class:
// doca_verbs_ah_attr_set_traffic_class.
func (a AHAttr) SetTrafficClass(v uint8) error {
	return setU8(symAHAttrSetTrafficClass, a.handleArg(), v)
}
