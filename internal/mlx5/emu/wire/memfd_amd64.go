package wire

// sysMemfdCreate is memfd_create's system call number (asm/unistd_64.h).
const sysMemfdCreate = 319
