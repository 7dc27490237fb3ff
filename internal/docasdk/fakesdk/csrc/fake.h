// fake.h: the recorder shared by the three fake DOCA SDK libraries.
//
// The fake stands in for libdoca_common.so, libdoca_verbs.so and
// libdoca_gpunetio.so in the tests of package docasdk and of the packages above it (built by
// package fakesdk). It implements every entry
// point the package resolves, with the parameter lists the package calls
// them with, and:
//   - records every call as one line "<function> <name>=<value> ..." (and
//     " -> <outputs>" for what it hands back), appended to the file named by
//     FAKE_DOCA_LOG (nothing is recorded when it is unset);
//   - returns handles that are distinct heap objects, printed as
//     "<kind>@0x<address>"; a pointer it did not hand out (or that was
//     destroyed) prints as "?@0x<address>", NULL as "NULL";
//   - fails a function on request: FAKE_DOCA_FAIL="name=code[,name=code]"
//     (read at every call) makes `name` return doca_error_t `code` without
//     acting, after filling its outputs with garbage; code "null" makes a
//     creator return DOCA_SUCCESS with a NULL object.
//   - with FAKE_DOCA_REAL_MEM=1, hands out real memory from the GPU handle
//     (see gpunetio.c), for callers that write what they allocate.
// The recorder lives in the common library; the other two link against it.

#ifndef FAKE_DOCA_H
#define FAKE_DOCA_H

#include <stddef.h>
#include <stdint.h>

// An object handed out by the fake. Setters store what getters return.
struct fk_obj {
	const char *kind;
	struct fk_obj *next;
	void *pd;              // dev: the struct ibv_pd * it was opened from
	uintptr_t addr;        // umem
	size_t size;           // umem
	uint32_t u32a, u32b;   // cq_attr / cq: size; qp_init_attr / qp: sq_wr, rq_wr
	uint32_t rsges;        // qp_init_attr / qp: receive_max_sges (0: not set)
	int send_dbr_mode;     // qp_init_attr
	int ordering;          // qp_init_attr
	int state;             // qp_attr
	void *qp_context;      // qp_init_attr
};

// fk_new returns a new object of kind (a string literal).
struct fk_obj *fk_new(const char *kind);
// fk_find returns the live object at p, or NULL.
struct fk_obj *fk_find(const void *p);
// fk_free releases a live object.
void fk_free(void *p);
// fk_h formats a handle into buf ("kind@0x...", "?@0x...", "NULL").
const char *fk_h(char buf[64], const void *p);
// fk_log appends one formatted line to $FAKE_DOCA_LOG.
void fk_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// fk_fail returns the failure asked for fn: 0 (none), a doca_error_t, or
// FK_NULL.
int fk_fail(const char *fn);
#define FK_NULL (-1)

// fk_create_fail handles a creator's injected failure: it returns the
// status to return at once (garbage left in *out, or DOCA_SUCCESS with a NULL
// *out for FK_NULL), or FK_GO_ON when no failure was asked for.
int fk_create_fail(const char *fn, void **out);
#define FK_GO_ON (-2)

#define CREATE_FAIL(fn, out)                                  \
	do {                                                  \
		int _r = fk_create_fail((fn), (void **)(out)); \
		if (_r != FK_GO_ON)                           \
			return _r;                            \
	} while (0)

// FAIL returns the injected failure of fn, if any.
#define FAIL(fn)                                                       \
	do {                                                           \
		int _f = fk_fail(fn);                                  \
		if (_f != 0) {                                         \
			fk_log("%s -> error %d (injected)", (fn), _f); \
			return _f;                                     \
		}                                                      \
	} while (0)

// The garbage written into outputs before an injected failure.
#define FK_GARBAGE ((void *)(uintptr_t)0xdeadbeefUL)

// FK_H(p) formats handle p into a fresh buffer on the stack.
#define FK_H(p) fk_h((char[64]){0}, (p))

#endif
