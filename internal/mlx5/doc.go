// Package mlx5 is the byte-level vocabulary of an mlx5 (ConnectX) NIC as the
// rest of the library speaks it: PRM command mailboxes (QUERY_HCA_CAP,
// CREATE_CQ, CREATE_QP, the QP transitions, CREATE_RMP, ...), the work-queue
// and completion-queue entry formats, doorbells, and the driver boundary.
//
// Both drivers go through it. The DevX driver (package devx) sends the bytes
// the builders here produce to the kernel; the software emulator (package
// emu) parses the same bytes with the parsers here and answers with output
// mailboxes built here. A layout is therefore defined exactly once, and a
// test that runs on the emulator exercises the real encoders.
//
// # Bit addressing
//
// PRM layouts are flat bit strings of big-endian 32-bit dwords: bit address 0
// is the most significant bit of byte 0. A field of width w at address a
// lives in dword a/32, shifted left by 32-w-a%32; 32-bit fields are plain
// BE32 and 64-bit fields plain BE64 at byte a/8; wider fields (GIDs, MACs)
// are byte arrays in wire order. Field (bits.go) names one field; the
// exported *Fields tables (QPCFields, ADSFields, CQCFields, HCACapFields,
// RoCECapFields, AtomicCapFields, HCACap2Fields, RMPCFields, WQCFields,
// RoCEAddrFields, ...) give every field relative to the start of its
// structure, and the *MailboxBit constants say where a structure sits in a
// mailbox (qpc at bit 0x0c0 of CREATE_QP / the transitions / QUERY_QP, cqc
// at bit 0x80 of CREATE_CQ / QUERY_CQ, the capability at bit 0x80 of the
// QUERY_HCA_CAP output, rmpc at bit 0x100 of CREATE_RMP / QUERY_RMP). Use
// Field.At(base) to move a relative field into a mailbox.
//
// # Typed structures and mailboxes
//
// Every structure (QPContext, AddressPath, CQContext, HCACaps, RoCECaps,
// AtomicCaps, HCACaps2, RMPContext, WQContext, RoCEAddr, HCAVportContext)
// has Encode(b) error and Decode<Name>(b) (T, error). Every command input and
// output has Marshal() ([]byte, error), producing the exact size of the
// opcode table, and Unmarshal<Name>(b) (T, error), which accepts only the
// sizes the command allows and checks the opcode. Builders never truncate: a
// value that does not fit its field is a *LayoutError matching ErrRange, and
// nothing is written. Parsers never panic on short or garbage input: the
// length is checked first (ErrLength), and fuzz tests hold them to it. All
// layout errors name the operation and the field and match syscall.EINVAL.
// Reserved bits are written as zero by Marshal and ignored by the parsers.
//
// Inputs embed CmdHeader (opcode, uid, vhca_tunnel_id, op_mod); Marshal
// fills in the command's opcode and rejects a header that names another.
// Outputs embed OutHeader (status, syndrome); OutHeader.Err turns a failed
// status into the package's *CmdError. Commands that only name one object
// (DESTROY_*/QUERY_* inputs) share ObjCmdIn; CREATE_* outputs and status-only
// outputs share CreateOut.
//
// # QP transitions
//
// ModifyQPIn carries every transition; its opcode selects the size (16 bytes
// for 2ERR/2RST, 272, or 464 for INIT2INIT/RTS2RTS). The rules the verbs
// layer and the emulator share are data, in Transition (TransitionFor):
// legal source states (TransitionBetween looks a transition up by state
// pair), the qpc fields the transition always applies
// (Required), and the optional fields it accepts as the kernel's allowed
// opt_param_mask per service type (AllowedRC/AllowedUC, AllowedOptParams).
// Field names are the PRM names, address-path members prefixed with
// "primary_address_path." / "secondary_address_path." (QPCFieldNames).
// AppliedFields(op, st, mask, ext) resolves a command to the list of fields
// to apply, rejecting disallowed mask bits, and QPContext.CopyFields applies
// them; that is all an emulator needs to model a modify. AckTimeout and
// MinRNRNak (and their inverses) convert the IBA timer codes.
//
// # Generated code
//
// The layouts and enumerations are tables, one per structure and per enum,
// in prm/*.prm; go generate (prmgen, internal/prmgen) writes the Field
// tables, the structs, their bindings, Encode/Decode, the simple command
// inputs' Marshal/Unmarshal, the outputs' Marshal, MarshalTo and Unmarshal
// (every output but CreateOut), the fixed WQE segments and every enum's
// constants and String into *_gen.go. Adding a field is one line of a table.
// prm/README.md describes the format; a test fails when a generated file is
// stale.
//
// # Files
//
//   - prm/*.prm, *_gen.go: the tables and what is generated from them.
//   - bits.go: Field and the big-endian bit accessors.
//   - status.go: CmdError and the errno of a failed command.
//   - driver.go: the driver boundary (Provider, Device, PD, MR, UMEM, UAR).
//   - misc_cmd.go: LayoutError, the field-binding machinery every typed
//     structure uses, the output header, ObjCmdIn and CreateOut.
//   - caps.go: op_mod, NewQueryHCACapOut and the typed views of the
//     QUERY_HCA_CAP output, DecodeCapability.
//   - roce.go: the RoCE cap bits and RoCEAddr.String.
//   - cq.go: the CQE size codes.
//   - qpc.go: MTU conversions, QPCFieldNames and CopyFields.
//   - qp.go: CREATE_QP Marshal/Unmarshal (two sizes).
//   - transition.go: opt_param_mask, the transition rules, the modify-QP
//     Marshal/Unmarshal and the timer encodings.
//   - wqe.go, wqe_segments.go: send and receive WQE formats.
//   - cqe.go, syndrome.go: the CQE format and completion errors.
//   - doorbell.go: doorbell records and UAR doorbell values.
//
// # Lifetime and threading
//
// Everything in the command files is plain values: structures are copied,
// Marshal allocates a fresh slice, parsers copy what they read and keep no
// reference to the input. All functions are safe for concurrent use. The
// command path is not a hot path; the codecs favour one definition per layout
// over speed.
package mlx5

//go:generate go run ./internal/prmgen -spec prm -out .
