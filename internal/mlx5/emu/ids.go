package emu

// idSpace hands out the identifiers of one kind of object (PD numbers,
// memory key indexes, CQNs, QPNs, RMP numbers, UAR indexes, UMEM ids,
// context uids) next-fit over [lo, hi]: each new id is the first one after
// the previous that no live object holds, wrapping from hi to lo. So a live
// id is never handed out twice, and a freed one comes back only after every
// other id was tried: the longest possible time before a stale handle can
// name a new object. pass counts the wraps; memory keys carry it as their
// variant byte (mkeyOf). Guarded by the NIC's mu.
type idSpace struct {
	lo, hi uint32
	next   uint32
	pass   uint32
}

func newIDSpace(lo, hi, first uint32) idSpace {
	return idSpace{lo: lo, hi: hi, next: first}
}

// alloc returns the next id that inUse says is free and the pass it was
// handed out in; ok is false when every id is in use.
func (s *idSpace) alloc(inUse func(uint32) bool) (id, pass uint32, ok bool) {
	if s.next < s.lo || s.next > s.hi {
		s.next = s.lo
	}
	for n := uint64(s.hi-s.lo) + 1; n > 0; n-- {
		id, pass = s.next, s.pass
		if s.next == s.hi {
			s.next = s.lo
			s.pass++
		} else {
			s.next++
		}
		if !inUse(id) {
			return id, pass, true
		}
	}
	return 0, 0, false
}

// nicIDs are a NIC's identifier spaces. The ranges are the PRM field
// widths; the reserved values stay out (0 everywhere; QPN 1; mkey index 1,
// whose variant-0 key is MLX5_INVALID_LKEY 0x100).
type nicIDs struct {
	uid, pd, mkey, umem, uar, cq, qp, rmp idSpace
}

func newNICIDs() nicIDs {
	return nicIDs{
		uid:  newIDSpace(1, 0xffff, 1),
		pd:   newIDSpace(1, mask24, 1),
		mkey: newIDSpace(2, mask24, 0x100),
		umem: newIDSpace(1, 0xffffffff, 1),
		uar:  newIDSpace(1, mask24, 0x10),
		cq:   newIDSpace(1, mask24, 0x400),
		qp:   newIDSpace(2, mask24, 0x100),
		rmp:  newIDSpace(1, mask24, 0x80),
	}
}
