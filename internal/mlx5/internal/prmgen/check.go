package main

import (
	"fmt"
	"sort"
)

// typeInfo is what the generator knows of a Go type a member may have.
type typeInfo struct {
	kind   typeKind
	bits   uint32     // unsigned integers: their width
	rawLen uint32     // [N]byte: N
	st     *structDef // structures
}

type typeKind int

const (
	kUint typeKind = iota
	kBool
	kRaw
	kStruct
)

// universe resolves the member types of every spec file at once (a field
// of one file may have an enum type of another).
type universe struct {
	types  map[string]typeInfo
	consts map[string]uint64
	where  map[string]string // type name -> "file:line" of its declaration
}

func newUniverse(files []*specFile) (*universe, error) {
	u := &universe{types: map[string]typeInfo{"bool": {kind: kBool}}, consts: map[string]uint64{},
		where: map[string]string{}}
	for name, b := range uintBits {
		u.types[name] = typeInfo{kind: kUint, bits: b}
	}
	declare := func(f *specFile, line int, name string, ti typeInfo) error {
		if prev, ok := u.where[name]; ok {
			return &specError{f.name + ".prm", line, fmt.Sprintf("type %s already declared at %s", name, prev)}
		}
		if _, builtin := u.types[name]; builtin {
			return &specError{f.name + ".prm", line, fmt.Sprintf("type %s is predeclared", name)}
		}
		u.types[name] = ti
		u.where[name] = fmt.Sprintf("%s.prm:%d", f.name, line)
		return nil
	}
	for _, f := range files {
		for _, c := range f.consts {
			if prev, ok := u.where[c.name]; ok {
				return nil, &specError{f.name + ".prm", c.line, fmt.Sprintf("%s already declared at %s", c.name, prev)}
			}
			u.consts[c.name] = c.value
			u.where[c.name] = fmt.Sprintf("%s.prm:%d", f.name, c.line)
		}
	}
	// A bit address may name a const of any file.
	for _, f := range files {
		for _, s := range f.structs {
			for _, m := range s.members {
				if v, ok := u.consts[m.bit]; ok && !m.bitNum {
					m.bitVal, m.bitNum = uint32(v), true
				}
			}
		}
	}
	for _, f := range files {
		for _, x := range f.externs {
			b, ok := uintBits[x.underlying]
			if !ok {
				return nil, &specError{f.name + ".prm", x.line, fmt.Sprintf("extern %s: %q is not an unsigned integer type", x.name, x.underlying)}
			}
			if err := declare(f, x.line, x.name, typeInfo{kind: kUint, bits: b}); err != nil {
				return nil, err
			}
		}
		for _, e := range f.enums {
			if err := declare(f, e.line, e.name, typeInfo{kind: kUint, bits: uintBits[e.underlying]}); err != nil {
				return nil, err
			}
		}
		for _, s := range f.structs {
			if err := declare(f, s.line, s.name, typeInfo{kind: kStruct, st: s}); err != nil {
				return nil, err
			}
		}
	}
	return u, nil
}

func (u *universe) lookup(t string) (typeInfo, bool) {
	var n uint32
	if _, err := fmt.Sscanf(t, "[%d]byte", &n); err == nil && fmt.Sprintf("[%d]byte", n) == t && n > 0 {
		return typeInfo{kind: kRaw, rawLen: n}, true
	}
	ti, ok := u.types[t]
	return ti, ok
}

// check validates one file against the universe: value sets, member
// types against widths, the bit rules of Field, and overlaps.
func (u *universe) check(f *specFile) error {
	file := f.name + ".prm"
	for _, e := range f.enums {
		names, values, prms := map[string]bool{}, map[uint64]string{}, map[string]string{}
		for _, v := range e.values {
			if names[v.name] {
				return &specError{file, v.line, fmt.Sprintf("enum %s: %s declared twice", e.name, v.name)}
			}
			names[v.name] = true
			if prev, ok := values[v.value]; ok {
				return &specError{file, v.line, fmt.Sprintf("enum %s: %s has the value of %s", e.name, v.name, prev)}
			}
			values[v.value] = v.name
			if prev, ok := prms[v.prm]; ok {
				return &specError{file, v.line, fmt.Sprintf("enum %s: %s has the name %q of %s", e.name, v.name, v.prm, prev)}
			}
			prms[v.prm] = v.name
		}
	}
	for _, s := range f.structs {
		if err := u.checkStruct(file, s); err != nil {
			return err
		}
	}
	return nil
}

// interval is the bits [lo, hi) one binding covers.
type interval struct {
	lo, hi uint32
	name   string
}

func (u *universe) checkStruct(file string, s *structDef) error {
	fail := func(m *member, format string, args ...any) error {
		return &specError{file, m.line, fmt.Sprintf("struct %s: %s: %s", s.name, m.key, fmt.Sprintf(format, args...))}
	}
	keys, paths, prms := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, m := range s.members {
		if paths[m.path] {
			return fail(m, "member %s declared twice", m.path)
		}
		paths[m.path] = true
		if m.kind == memEmbed {
			continue
		}
		if prms[m.prm] {
			return fail(m, "PRM name %s used twice", m.prm)
		}
		prms[m.prm] = true
		ti, ok := u.lookup(m.typ)
		if !ok {
			return fail(m, "unknown type %s (declare it with enum, struct or extern)", m.typ)
		}
		if m.kind == memNest {
			if ti.kind != kStruct {
				return fail(m, "nest needs a struct type, %s is not one", m.typ)
			}
			if ti.st.nobind || ti.st.segment != "" || len(ti.st.forms) > 0 {
				return fail(m, "%s cannot be nested (no plain bindings)", m.typ)
			}
			if s.segment != "" {
				return fail(m, "a segment has no nested structures")
			}
			continue
		}
		if keys[m.key] {
			return fail(m, "table key declared twice")
		}
		keys[m.key] = true
		if err := checkWidth(m, ti); err != nil {
			return fail(m, "%v", err)
		}
		if s.segment != "" {
			if !m.bitNum || m.bitVal+m.width > 128 {
				return fail(m, "a segment field needs a numeric bit address inside 16 bytes")
			}
			if ti.kind == kRaw {
				return fail(m, "a segment has no byte arrays")
			}
		}
	}
	var ivs []interval
	if err := u.intervals(s, 0, "", &ivs); err != nil {
		return err
	}
	for _, c := range []string{s.codecLen, inLen(s), outLen(s)} {
		n, ok := u.consts[c]
		if !ok {
			continue
		}
		for _, iv := range ivs {
			if uint64(iv.hi) > 8*n {
				return &specError{file, s.line, fmt.Sprintf("struct %s: %s ends at bit 0x%x, past the %d bytes of %s",
					s.name, iv.name, iv.hi, n, c)}
			}
		}
	}
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].lo < ivs[j].lo })
	for i := 1; i < len(ivs); i++ {
		if ivs[i].lo < ivs[i-1].hi {
			return &specError{file, s.line, fmt.Sprintf("struct %s: %s overlaps %s", s.name, ivs[i].name, ivs[i-1].name)}
		}
	}
	return nil
}

func inLen(s *structDef) string {
	if s.in == nil {
		return ""
	}
	return s.in.length
}

func outLen(s *structDef) string {
	if s.out == nil {
		return ""
	}
	return s.out.length
}

// intervals collects the bits of every member with a numeric address,
// nested structures included.
func (u *universe) intervals(s *structDef, base uint32, prefix string, out *[]interval) error {
	for _, m := range s.members {
		if m.kind == memEmbed || !m.bitNum {
			continue
		}
		if m.kind == memNest {
			ti, _ := u.lookup(m.typ)
			if err := u.intervals(ti.st, base+m.bitVal, prefix+m.prm+".", out); err != nil {
				return err
			}
			continue
		}
		*out = append(*out, interval{base + m.bitVal, base + m.bitVal + m.width, prefix + m.prm})
	}
	return nil
}

// checkWidth applies the rules of Field (bits.go) and the Go type's width.
func checkWidth(m *member, ti typeInfo) error {
	switch ti.kind {
	case kBool:
		if m.width != 1 {
			return fmt.Errorf("a bool field is 1 bit wide, not %d", m.width)
		}
	case kUint:
		if m.width > ti.bits {
			return fmt.Errorf("%d bits do not fit %s (%d bits)", m.width, m.typ, ti.bits)
		}
	case kRaw:
		if m.width != 8*ti.rawLen {
			return fmt.Errorf("%s is %d bits, the field %d", m.typ, 8*ti.rawLen, m.width)
		}
		if m.bitNum && m.bitVal%8 != 0 {
			return fmt.Errorf("a byte array must start on a byte")
		}
		return nil
	case kStruct:
		return fmt.Errorf("a struct type needs nest, not field")
	}
	switch {
	case m.width == 64:
		if m.bitNum && m.bitVal%64 != 0 {
			return fmt.Errorf("a 64-bit field must be 64-bit aligned")
		}
	case m.width > 32:
		return fmt.Errorf("width %d: scalar fields are 1..32 or 64 bits", m.width)
	case m.bitNum && m.bitVal%32+m.width > 32:
		return fmt.Errorf("bit 0x%x width %d straddles a dword", m.bitVal, m.width)
	}
	return nil
}
