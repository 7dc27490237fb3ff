package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The model of one spec file: the enums and structures it declares, in
// order, and the imports their generated code needs.
type specFile struct {
	name    string // base name without ".prm"
	imports []string
	externs []*extern
	consts  []*constDef
	enums   []*enum
	structs []*structDef
}

// constDef is a size or position the tables use (and other code may).
type constDef struct {
	name, expr string
	value      uint64
	doc        []string
	comment    string
	line       int
}

// extern declares a Go type written by hand that generated fields use, so
// the generator knows its width.
type extern struct {
	name, underlying string
	line             int
}

type enum struct {
	name       string
	underlying string // uint8, uint16, uint32, uint64
	alias      bool   // type NAME = underlying
	doc        []string
	unknown    string // fmt format (or a literal) for values without a name
	nameFunc   string // alias enums: a function naming a value instead of String
	nameDoc    []string
	known      bool // emit Known() bool
	attrs      []*attr
	values     []*enumValue
	line       int
}

// attr is a per-value property emitted as a method returning it.
type attr struct {
	method, typ, def string
	doc              []string
}

type enumValue struct {
	name    string // Go constant
	expr    string // value as written
	value   uint64
	prm     string // the name String returns
	attrs   map[string]string
	doc     []string
	comment string
	line    int
}

// A structure: one member per line, in layout order.
type structDef struct {
	name     string
	doc      []string
	table    string // name of the exported Field table ("" for none)
	tableDoc []string
	codecLen string // Encode/Decode length constant ("" for no codec)
	codecPRM string // the PRM structure name used in error messages
	in       *inSpec
	out      *outSpec
	segment  string // prefix of the unexported field variables of a WQE segment
	nobind   bool   // no bindings method (the caller encodes by hand)
	members  []*member
	forms    []string // the mailbox sizes at which later members start to apply
	line     int
}

type inSpec struct {
	opcode, length, name string
}

// outSpec is a command output: its length and its name in errors.
type outSpec struct {
	length, name string
}

type memberKind int

const (
	memField memberKind = iota
	memNest
	memEmbed
)

type member struct {
	kind    memberKind
	key     string // name in the Field table; the Go member for plain fields
	path    string // the Go member path (may be "Ext.MMO"); equals key unless KEY=PATH
	prm     string // PRM field name, or the prefix of a nested structure
	bit     string // bit address as written: a number or a Go constant
	bitVal  uint32
	bitNum  bool // bit is a number (checked here)
	width   uint32
	typ     string
	form    int // index into structDef.forms + 1; 0 = always bound
	doc     []string
	comment string
	line    int
}

type specError struct {
	file string
	line int
	msg  string
}

func (e *specError) Error() string { return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg) }

// tokenize splits a spec line into tokens (double-quoted strings are one
// token, unquoted) and the trailing "//" comment.
func tokenize(line string) (toks []string, comment string, err error) {
	i := 0
	for i < len(line) {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case strings.HasPrefix(line[i:], "//"):
			return toks, strings.TrimSpace(line[i+2:]), nil
		case c == '"':
			j := i + 1
			for j < len(line) && line[j] != '"' {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(line) {
				return nil, "", fmt.Errorf("unterminated string")
			}
			s, uerr := strconv.Unquote(line[i : j+1])
			if uerr != nil {
				return nil, "", fmt.Errorf("bad string %s: %v", line[i:j+1], uerr)
			}
			toks = append(toks, s)
			i = j + 1
		default:
			j := i
			for j < len(line) && line[j] != ' ' && line[j] != '\t' {
				j++
			}
			toks = append(toks, line[i:j])
			i = j
		}
	}
	return toks, "", nil
}

// parseUint reads a number as Go writes it (0x.., decimal) or a shift a<<b.
func parseUint(s string) (uint64, error) {
	if a, b, ok := strings.Cut(s, "<<"); ok {
		x, err := strconv.ParseUint(a, 0, 64)
		if err != nil {
			return 0, err
		}
		y, err := strconv.ParseUint(b, 0, 6)
		if err != nil {
			return 0, err
		}
		return x << y, nil
	}
	return strconv.ParseUint(s, 0, 64)
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9'
		if !ok {
			return false
		}
	}
	return true
}

func isExported(s string) bool { return isIdent(s) && s[0] >= 'A' && s[0] <= 'Z' }

// parseSpec reads one spec file.
func parseSpec(name, src string) (*specFile, error) {
	f := &specFile{name: name}
	p := &parser{file: name + ".prm", out: f}
	lines := strings.Split(src, "\n")
	for n, line := range lines {
		if err := p.line(n+1, line); err != nil {
			return nil, err
		}
	}
	if p.enum != nil || p.st != nil {
		return nil, &specError{p.file, p.openLine, "block not closed with end"}
	}
	if len(p.pending) > 0 {
		return nil, &specError{p.file, len(lines), "doc lines at the end of the file document nothing"}
	}
	return f, nil
}

type parser struct {
	file     string
	out      *specFile
	enum     *enum
	st       *structDef
	pending  []string // "//" lines waiting for the next member
	openLine int
}

func (p *parser) errf(line int, format string, args ...any) error {
	return &specError{p.file, line, fmt.Sprintf(format, args...)}
}

func (p *parser) line(n int, raw string) error {
	s := strings.TrimSpace(raw)
	if s == "" || strings.HasPrefix(s, "#") {
		return nil
	}
	if strings.HasPrefix(s, "//") {
		p.pending = append(p.pending, strings.TrimSpace(strings.TrimPrefix(s, "//")))
		return nil
	}
	toks, comment, err := tokenize(s)
	if err != nil {
		return p.errf(n, "%v", err)
	}
	switch {
	case p.enum != nil:
		return p.enumLine(n, toks, comment)
	case p.st != nil:
		return p.structLine(n, toks, comment)
	}
	return p.topLine(n, toks, comment)
}

func (p *parser) takeDoc() []string {
	d := p.pending
	p.pending = nil
	return d
}

func (p *parser) topLine(n int, t []string, comment string) error {
	if t[0] != "const" && len(p.pending) > 0 {
		return p.errf(n, "// doc lines at the top level document a const only")
	}
	switch t[0] {
	case "const":
		if len(t) != 3 || !isExported(t[1]) {
			return p.errf(n, "usage: const Name value")
		}
		v, err := parseUint(t[2])
		if err != nil {
			return p.errf(n, "const %s: value %q: %v", t[1], t[2], err)
		}
		p.out.consts = append(p.out.consts, &constDef{name: t[1], expr: t[2], value: v, doc: p.takeDoc(),
			comment: comment, line: n})
	case "import":
		if len(t) != 2 {
			return p.errf(n, "import takes one path")
		}
		p.out.imports = append(p.out.imports, t[1])
	case "extern":
		if len(t) != 3 || !isExported(t[1]) {
			return p.errf(n, "usage: extern Type underlying")
		}
		p.out.externs = append(p.out.externs, &extern{name: t[1], underlying: t[2], line: n})
	case "enum":
		if len(t) < 3 || len(t) > 4 || !isExported(t[1]) {
			return p.errf(n, "usage: enum Name uint8|uint16|uint32|uint64 [alias]")
		}
		e := &enum{name: t[1], underlying: t[2], line: n}
		if _, ok := uintBits[e.underlying]; !ok {
			return p.errf(n, "enum %s: underlying type %q is not an unsigned integer type", e.name, e.underlying)
		}
		if len(t) == 4 {
			if t[3] != "alias" {
				return p.errf(n, "enum %s: unknown option %q", e.name, t[3])
			}
			e.alias = true
		}
		p.enum, p.openLine = e, n
	case "struct":
		if len(t) != 2 || !isExported(t[1]) {
			return p.errf(n, "usage: struct Name")
		}
		p.st, p.openLine = &structDef{name: t[1], line: n}, n
	default:
		return p.errf(n, "unknown directive %q (want import, extern, enum or struct)", t[0])
	}
	return nil
}

func (p *parser) enumLine(n int, t []string, comment string) error {
	e := p.enum
	rest := func() string { return strings.Join(t[1:], " ") }
	switch t[0] {
	case "end":
		if len(e.values) == 0 {
			return p.errf(n, "enum %s has no values", e.name)
		}
		if e.unknown == "" {
			return p.errf(n, "enum %s: no unknown format", e.name)
		}
		if e.alias && e.nameFunc == "" {
			return p.errf(n, "alias enum %s needs a namefunc (an alias type has no methods)", e.name)
		}
		if len(p.pending) > 0 {
			return p.errf(n, "doc lines before end belong to nothing")
		}
		p.out.enums = append(p.out.enums, e)
		p.enum = nil
	case "doc":
		e.doc = append(e.doc, rest())
	case "unknown":
		if len(t) != 2 {
			return p.errf(n, "unknown takes one (quoted) format")
		}
		e.unknown = t[1]
	case "namefunc":
		if len(t) != 2 || !isExported(t[1]) {
			return p.errf(n, "usage: namefunc FuncName")
		}
		e.nameFunc, e.nameDoc = t[1], p.takeDoc()
	case "known":
		e.known = true
	case "attr":
		if len(t) != 4 || !isExported(t[1]) {
			return p.errf(n, "usage: attr Method GoType default")
		}
		e.attrs = append(e.attrs, &attr{method: t[1], typ: t[2], def: t[3], doc: p.takeDoc()})
	default:
		if len(t) < 3 || !isExported(t[0]) {
			return p.errf(n, "usage: ConstName value name [attr=value...]")
		}
		v, err := parseUint(t[1])
		if err != nil {
			return p.errf(n, "%s: value %q: %v", t[0], t[1], err)
		}
		if v > maxOf(e.underlying) {
			return p.errf(n, "%s: value %#x does not fit %s", t[0], v, e.underlying)
		}
		ev := &enumValue{name: t[0], expr: t[1], value: v, prm: t[2], attrs: map[string]string{},
			doc: p.takeDoc(), comment: comment, line: n}
		for _, kv := range t[3:] {
			k, val, ok := strings.Cut(kv, "=")
			if !ok {
				return p.errf(n, "%s: %q is not attr=value", t[0], kv)
			}
			if e.attr(k) == nil {
				return p.errf(n, "%s: no attr %s declared before this value", t[0], k)
			}
			ev.attrs[k] = val
		}
		e.values = append(e.values, ev)
	}
	return nil
}

func (e *enum) attr(method string) *attr {
	for _, a := range e.attrs {
		if a.method == method {
			return a
		}
	}
	return nil
}

func (p *parser) structLine(n int, t []string, comment string) error {
	s := p.st
	rest := func() string { return strings.Join(t[1:], " ") }
	need := func(k int, usage string) error {
		if len(t) != k {
			return p.errf(n, "usage: %s", usage)
		}
		return nil
	}
	switch t[0] {
	case "end":
		if len(p.pending) > 0 {
			return p.errf(n, "doc lines before end belong to nothing")
		}
		if s.segment != "" && (s.table != "" || s.codecLen != "" || s.in != nil || s.out != nil || len(s.forms) > 0) {
			return p.errf(n, "struct %s: a segment has no table, codec, in, out or form", s.name)
		}
		if s.nobind && (s.codecLen != "" || s.in != nil || s.out != nil) {
			return p.errf(n, "struct %s: codec, in and out need bindings", s.name)
		}
		if s.in != nil && !s.embeds("CmdHeader") {
			return p.errf(n, "struct %s: in needs embed CmdHeader", s.name)
		}
		if s.out != nil && (s.in != nil || !s.embeds("OutHeader") || len(s.forms) > 0) {
			return p.errf(n, "struct %s: out needs embed OutHeader, and no in or form", s.name)
		}
		p.out.structs = append(p.out.structs, s)
		p.st = nil
		return nil
	case "doc":
		s.doc = append(s.doc, rest())
	case "table":
		if err := need(2, "table VarName"); err != nil {
			return err
		}
		s.table = t[1]
	case "tabledoc":
		s.tableDoc = append(s.tableDoc, rest())
	case "codec":
		if err := need(3, "codec LenConst prm_name"); err != nil {
			return err
		}
		s.codecLen, s.codecPRM = t[1], t[2]
	case "in":
		if err := need(4, `in OpcodeConst LenConst "NAME in"`); err != nil {
			return err
		}
		s.in = &inSpec{opcode: t[1], length: t[2], name: t[3]}
	case "out":
		if err := need(3, `out LenConst "NAME out"`); err != nil {
			return err
		}
		s.out = &outSpec{length: t[1], name: t[2]}
	case "segment":
		if err := need(2, "segment varPrefix"); err != nil {
			return err
		}
		s.segment = t[1]
	case "nobind":
		s.nobind = true
	case "form":
		if err := need(2, "form LenConst"); err != nil {
			return err
		}
		s.forms = append(s.forms, t[1])
	case "embed":
		if err := need(2, "embed Type"); err != nil {
			return err
		}
		s.members = append(s.members, &member{kind: memEmbed, typ: t[1], key: t[1], path: t[1],
			doc: p.takeDoc(), comment: comment, line: n})
	case "field":
		if err := need(6, "field Key[=Member] prm_name bit width Type"); err != nil {
			return err
		}
		m := &member{kind: memField, prm: t[2], bit: t[3], typ: t[5], form: len(s.forms),
			doc: p.takeDoc(), comment: comment, line: n}
		m.key, m.path = t[1], t[1]
		if k, path, ok := strings.Cut(t[1], "="); ok {
			m.key, m.path = k, path
		}
		if !isExported(m.key) {
			return p.errf(n, "field key %q is not an exported identifier", m.key)
		}
		for _, part := range strings.Split(m.path, ".") {
			if !isExported(part) {
				return p.errf(n, "member path %q is not a path of exported identifiers", m.path)
			}
		}
		w, err := strconv.ParseUint(t[4], 0, 32)
		if err != nil || w == 0 {
			return p.errf(n, "%s: width %q is not a positive number", m.key, t[4])
		}
		m.width = uint32(w)
		if err := m.parseBit(); err != nil {
			return p.errf(n, "%s: %v", m.key, err)
		}
		s.members = append(s.members, m)
	case "nest":
		if err := need(5, "nest Member prm_prefix bit Type"); err != nil {
			return err
		}
		m := &member{kind: memNest, key: t[1], path: t[1], prm: t[2], bit: t[3], typ: t[4], form: len(s.forms),
			doc: p.takeDoc(), comment: comment, line: n}
		if !isExported(m.key) {
			return p.errf(n, "nest member %q is not an exported identifier", m.key)
		}
		if err := m.parseBit(); err != nil {
			return p.errf(n, "%s: %v", m.key, err)
		}
		s.members = append(s.members, m)
	default:
		return p.errf(n, "unknown struct directive %q", t[0])
	}
	return nil
}

func (m *member) parseBit() error {
	if isIdent(m.bit) {
		return nil
	}
	v, err := parseUint(m.bit)
	if err != nil || v > 1<<20 {
		return fmt.Errorf("bit address %q is neither a number nor a Go constant", m.bit)
	}
	m.bitVal, m.bitNum = uint32(v), true
	return nil
}

func (s *structDef) embeds(typ string) bool {
	for _, m := range s.members {
		if m.kind == memEmbed && m.typ == typ {
			return true
		}
	}
	return false
}

var uintBits = map[string]uint32{"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}

func maxOf(t string) uint64 {
	b := uintBits[t]
	if b == 64 {
		return ^uint64(0)
	}
	return 1<<b - 1
}
