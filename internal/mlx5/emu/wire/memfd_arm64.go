package wire

// sysMemfdCreate is memfd_create's system call number (asm-generic/unistd.h).
const sysMemfdCreate = 279
