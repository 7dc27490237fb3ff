package mlx5

// The command opcodes, their names and OpcodeName are generated from
// prm/opcode.prm (opcode_gen.go).
