// fake.h: test doubles of the rdma-core entry points package devx binds.

#ifndef GDAKI_FAKEVERBS_H
#define GDAKI_FAKEVERBS_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

// What the fakes received, and how the next call should fail.
struct fake_rec {
	// Inputs of the last call of each kind.
	uint32_t open_flags;
	uint64_t open_comp_mask;
	uint8_t port;
	size_t port_attr_size; // 0: the compat symbol was called
	uint32_t gid_port, gid_index, gid_flags;
	size_t gid_entry_size;
	uint64_t obj_type;
	void *mr_pd;
	uintptr_t mr_addr;
	size_t mr_length;
	uint64_t mr_iova;
	unsigned int mr_access;
	uint64_t dmabuf_offset;
	size_t dmabuf_length;
	uint64_t dmabuf_iova;
	int dmabuf_fd;
	int dmabuf_access;
	uintptr_t umem_addr;
	size_t umem_size;
	uint32_t umem_access;
	struct mlx5dv_devx_umem_in umem_in;
	uint32_t uar_flags;
	size_t inlen, outlen;
	uint8_t in[16];
	uint32_t eqn_vector;
	void *sub_obj;
	uint16_t sub_events_sz, sub_first_event;
	uint64_t sub_cookie;
	uint32_t ev_channel_flags;
	int import_fd;
	uint32_t import_pd_handle;

	// Calls made, by kind.
	int opens, closes, pds, pd_frees, mrs, mr_frees, umems, umem_frees, uars,
		uar_frees, objs, obj_frees, cmds, channels, channel_frees, subs, imports, pd_imports,
		pd_unimports;

	// The event channel's pending events (fake_push_event) and the
	// failure of its next read.
	int ev_pending;
	uint64_t ev_cookie;
	uint8_t ev_eqe[64];
	int ev_read_errno;

	// Failure injection: the next call fails with fail_errno (pointer calls
	// set errno, int calls return it). A DevX command with fail_status set
	// writes status and syndrome into its output and fails with EREMOTEIO.
	int fail_errno;
	char fail_fn[64]; // only this entry point fails; empty: the next call
	uint8_t fail_status;
	uint32_t fail_syndrome;

	// Open returns the extended context (provider query_port op) when set.
	int extended;
};

extern struct fake_rec fake;

void fake_reset(void);
void *fake_fn(const char *name);

// fake_push_event queues one event on the fake event channel: its fd
// becomes readable.
void fake_push_event(uint64_t cookie, const uint8_t *eqe);

#endif
