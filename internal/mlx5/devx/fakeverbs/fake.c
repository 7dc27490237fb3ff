//go:build cgo

// fake.c: test doubles of libibverbs / libmlx5 entry points. They check
// nothing about a device; they record their arguments and return fixed,
// recognisable values, so package devx's tests can check how its shims
// marshal arguments and results without an RDMA device.

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fake.h"

struct fake_rec fake;

// Two mlx5 devices and one that the mlx5 provider does not serve.
static struct ibv_device fake_devs[3];
static struct ibv_device *fake_list[4];
static struct verbs_context fake_vctx;
static struct ibv_context fake_ctx;
static struct ibv_pd fake_pd;
static struct ibv_mr fake_mr;
static struct mlx5dv_devx_umem fake_umem;
static struct mlx5dv_devx_uar fake_uar;
static int fake_obj_token;
static struct mlx5dv_devx_event_channel fake_evch = {.fd = -1};

void fake_reset(void)
{
	memset(&fake, 0, sizeof(fake));
	memset(fake_devs, 0, sizeof(fake_devs));
	strcpy(fake_devs[0].name, "mlx5_0");
	strcpy(fake_devs[0].ibdev_path, "/sys/class/infiniband/mlx5_0");
	strcpy(fake_devs[1].name, "mlx5_1");
	strcpy(fake_devs[1].ibdev_path, "/sys/class/infiniband/mlx5_1");
	strcpy(fake_devs[2].name, "rxe0");
	strcpy(fake_devs[2].ibdev_path, "/sys/class/infiniband/rxe0");
	for (int i = 0; i < 3; i++)
		fake_list[i] = &fake_devs[i];
	fake_list[3] = NULL;
}

// failing consumes the injected errno if it is meant for entry point fn.
static int failing(const char *fn)
{
	int e = fake.fail_errno;

	if (e == 0 || (fake.fail_fn[0] != 0 && strcmp(fake.fail_fn, fn) != 0))
		return 0;
	fake.fail_errno = 0;
	fake.fail_fn[0] = 0;
	return e;
}

static struct ibv_device **f_get_device_list(int *n)
{
	int e = failing("ibv_get_device_list");

	if (e) {
		errno = e;
		return NULL;
	}
	if (n)
		*n = 3;
	return fake_list;
}

static void f_free_device_list(struct ibv_device **l) { (void)l; }

static const char *f_get_device_name(struct ibv_device *d) { return d->name; }

static __be64 f_get_device_guid(struct ibv_device *d)
{
	return htobe64(0x0002c90300a1b200ULL + (uint64_t)(d - fake_devs));
}

static bool f_is_supported(struct ibv_device *d) { return strncmp(d->name, "mlx5", 4) == 0; }

static int f_query_port_ex(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a, size_t sz);

static struct ibv_context *f_open_device(struct ibv_device *d, struct mlx5dv_context_attr *attr)
{
	int e = failing("mlx5dv_open_device");

	fake.open_flags = attr->flags;
	fake.open_comp_mask = attr->comp_mask;
	if (e) {
		errno = e;
		return NULL;
	}
	fake.opens++;
	if (fake.extended) {
		memset(&fake_vctx, 0, sizeof(fake_vctx));
		fake_vctx.sz = sizeof(fake_vctx);
		fake_vctx.query_port = f_query_port_ex;
		fake_vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
		fake_vctx.context.device = d;
		return &fake_vctx.context;
	}
	memset(&fake_ctx, 0, sizeof(fake_ctx));
	fake_ctx.device = d;
	return &fake_ctx;
}

static int f_close_device(struct ibv_context *c)
{
	(void)c;
	int e = failing("ibv_close_device");

	if (!e)
		fake.closes++;
	return e;
}

static int f_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
	(void)c;
	int e = failing("ibv_query_device");

	if (e)
		return e;
	memset(a, 0, sizeof(*a));
	strcpy(a->fw_ver, "16.35.1012");
	a->node_guid = htobe64(0x0002c90300a1b200ULL);
	a->vendor_id = 0x02c9;
	a->vendor_part_id = 4125;
	a->max_mr_size = 1ULL << 40;
	a->max_qp = 1 << 17;
	a->max_qp_wr = 32768;
	a->max_cqe = 1 << 22;
	a->max_pd = 1 << 24;
	a->max_qp_rd_atom = 16;
	a->max_qp_init_rd_atom = 16;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->phys_port_cnt = 1;
	return 0;
}

static void fill_port(uint8_t port, struct ibv_port_attr *a)
{
	fake.port = port;
	a->state = IBV_PORT_ACTIVE;
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = IBV_MTU_1024;
	a->gid_tbl_len = 255;
	a->lid = 0x12;
	a->sm_lid = 0x1;
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	a->active_width = 2;
	a->active_speed = 64;
}

static int f_query_port_ex(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a, size_t sz)
{
	(void)c;
	int e = failing("ibv_query_port");

	if (e)
		return e;
	fake.port_attr_size = sz;
	fill_port(port, a);
	return 0;
}

static int f_query_port_compat(struct ibv_context *c, uint8_t port, void *a)
{
	(void)c;
	int e = failing("ibv_query_port");

	if (e)
		return e;
	fake.port_attr_size = 0;
	fill_port(port, (struct ibv_port_attr *)a);
	return 0;
}

static int f_query_gid_ex(struct ibv_context *c, uint32_t port, uint32_t index,
			  struct ibv_gid_entry *entry, uint32_t flags, size_t sz)
{
	(void)c;
	int e = failing("_ibv_query_gid_ex");

	fake.gid_port = port;
	fake.gid_index = index;
	fake.gid_flags = flags;
	fake.gid_entry_size = sz;
	if (e)
		return e;
	memset(entry, 0, sizeof(*entry));
	entry->gid.raw[0] = 0xfe;
	entry->gid.raw[1] = 0x80;
	entry->gid.raw[15] = (uint8_t)index;
	entry->gid_index = index;
	entry->port_num = port;
	entry->gid_type = IBV_GID_TYPE_ROCE_V2;
	entry->ndev_ifindex = 7;
	return 0;
}

static struct ibv_pd *f_alloc_pd(struct ibv_context *c)
{
	int e = failing("ibv_alloc_pd");

	if (e) {
		errno = e;
		return NULL;
	}
	fake.pds++;
	fake_pd.context = c;
	fake_pd.handle = 3;
	return &fake_pd;
}

static int f_dealloc_pd(struct ibv_pd *pd)
{
	(void)pd;
	int e = failing("ibv_dealloc_pd");

	if (!e)
		fake.pd_frees++;
	return e;
}

static int f_init_obj(struct mlx5dv_obj *obj, uint64_t type)
{
	int e = failing("mlx5dv_init_obj");

	fake.obj_type = type;
	if (e)
		return e;
	if (type & MLX5DV_OBJ_PD)
		obj->pd.out->pdn = 0x1a2b3c;
	return 0;
}

static struct ibv_mr *f_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova,
				     unsigned int access)
{
	int e = failing("ibv_reg_mr_iova2");

	fake.mr_pd = pd;
	fake.mr_addr = (uintptr_t)addr;
	fake.mr_length = len;
	fake.mr_iova = iova;
	fake.mr_access = access;
	if (e) {
		errno = e;
		return NULL;
	}
	fake.mrs++;
	fake_mr.lkey = 0x1234;
	fake_mr.rkey = 0x5678;
	return &fake_mr;
}

static struct ibv_mr *f_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t len,
				      uint64_t iova, int fd, int access)
{
	int e = failing("ibv_reg_dmabuf_mr");

	fake.mr_pd = pd;
	fake.dmabuf_offset = offset;
	fake.dmabuf_length = len;
	fake.dmabuf_iova = iova;
	fake.dmabuf_fd = fd;
	fake.dmabuf_access = access;
	if (e) {
		errno = e;
		return NULL;
	}
	fake.mrs++;
	fake_mr.lkey = 0x4321;
	fake_mr.rkey = 0x8765;
	return &fake_mr;
}

static int f_dereg_mr(struct ibv_mr *mr)
{
	(void)mr;
	int e = failing("ibv_dereg_mr");

	if (!e)
		fake.mr_frees++;
	return e;
}

static struct mlx5dv_devx_umem *f_umem_reg(struct ibv_context *c, void *addr, size_t size,
					   uint32_t access)
{
	(void)c;
	int e = failing("mlx5dv_devx_umem_reg");

	fake.umem_addr = (uintptr_t)addr;
	fake.umem_size = size;
	fake.umem_access = access;
	if (e) {
		errno = e;
		return NULL;
	}
	fake.umems++;
	fake_umem.umem_id = 0x77;
	return &fake_umem;
}

static struct mlx5dv_devx_umem *f_umem_reg_ex(struct ibv_context *c, struct mlx5dv_devx_umem_in *in)
{
	(void)c;
	int e = failing("mlx5dv_devx_umem_reg_ex");

	fake.umem_in = *in;
	if (e) {
		errno = e;
		return NULL;
	}
	fake.umems++;
	fake_umem.umem_id = 0x78;
	return &fake_umem;
}

static int f_umem_dereg(struct mlx5dv_devx_umem *u)
{
	(void)u;
	int e = failing("mlx5dv_devx_umem_dereg");

	if (!e)
		fake.umem_frees++;
	return e;
}

static struct mlx5dv_devx_uar *f_alloc_uar(struct ibv_context *c, uint32_t flags)
{
	(void)c;
	int e = failing("mlx5dv_devx_alloc_uar");

	fake.uar_flags = flags;
	if (e) {
		errno = e;
		return NULL;
	}
	fake.uars++;
	fake_uar.base_addr = (void *)(uintptr_t)0x7f0000010000ULL;
	fake_uar.reg_addr = (void *)(uintptr_t)0x7f0000010800ULL;
	fake_uar.page_id = 0x19;
	fake_uar.mmap_off = 0x3000;
	return &fake_uar;
}

static void f_free_uar(struct mlx5dv_devx_uar *u)
{
	(void)u;
	fake.uar_frees++;
}

// cmd records a DevX command and answers it: the injected errno, a firmware
// failure, or OK with 0x4242 as the object number (bit 0x48, 24 bits).
static int cmd(const char *fn, const void *in, size_t inlen, void *out, size_t outlen)
{
	int e = failing(fn);

	fake.cmds++;
	fake.inlen = inlen;
	fake.outlen = outlen;
	memcpy(fake.in, in, inlen < sizeof(fake.in) ? inlen : sizeof(fake.in));
	if (e)
		return e;
	memset(out, 0, outlen);
	if (fake.fail_status) {
		uint8_t *o = out;

		o[0] = fake.fail_status;
		o[4] = (uint8_t)(fake.fail_syndrome >> 24);
		o[5] = (uint8_t)(fake.fail_syndrome >> 16);
		o[6] = (uint8_t)(fake.fail_syndrome >> 8);
		o[7] = (uint8_t)fake.fail_syndrome;
		fake.fail_status = 0;
		return EREMOTEIO;
	}
	if (outlen >= 12) {
		uint8_t *o = out;

		o[10] = 0x42;
		o[11] = 0x42;
	}
	return 0;
}

static struct mlx5dv_devx_obj *f_obj_create(struct ibv_context *c, const void *in, size_t inlen,
					    void *out, size_t outlen)
{
	(void)c;
	int rc = cmd("mlx5dv_devx_obj_create", in, inlen, out, outlen);

	if (rc) {
		errno = rc;
		return NULL;
	}
	fake.objs++;
	return (struct mlx5dv_devx_obj *)&fake_obj_token;
}

static int f_obj_query(struct mlx5dv_devx_obj *o, const void *in, size_t inlen, void *out,
		       size_t outlen)
{
	(void)o;
	return cmd("mlx5dv_devx_obj_query", in, inlen, out, outlen);
}

static int f_obj_modify(struct mlx5dv_devx_obj *o, const void *in, size_t inlen, void *out,
			size_t outlen)
{
	(void)o;
	return cmd("mlx5dv_devx_obj_modify", in, inlen, out, outlen);
}

static int f_obj_destroy(struct mlx5dv_devx_obj *o)
{
	(void)o;
	int e = failing("mlx5dv_devx_obj_destroy");

	if (!e)
		fake.obj_frees++;
	return e;
}

static int f_general_cmd(struct ibv_context *c, const void *in, size_t inlen, void *out,
			 size_t outlen)
{
	(void)c;
	return cmd("mlx5dv_devx_general_cmd", in, inlen, out, outlen);
}

static int f_query_eqn(struct ibv_context *c, uint32_t vector, uint32_t *eqn)
{
	(void)c;
	int e = failing("mlx5dv_devx_query_eqn");

	fake.eqn_vector = vector;
	if (e)
		return e;
	*eqn = vector + 10;
	return 0;
}

// The event channel: an eventfd (nonblocking, semaphore) counting the
// events fake_push_event queued; one event is held at a time.
static struct mlx5dv_devx_event_channel *f_create_event_channel(struct ibv_context *c,
								 enum mlx5dv_devx_create_event_channel_flags fl)
{
	(void)c;
	int e = failing("mlx5dv_devx_create_event_channel");

	fake.ev_channel_flags = fl;
	if (e) {
		errno = e;
		return NULL;
	}
	fake_evch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (fake_evch.fd < 0)
		return NULL;
	fake.channels++;
	return &fake_evch;
}

static void f_destroy_event_channel(struct mlx5dv_devx_event_channel *ch)
{
	close(ch->fd);
	ch->fd = -1;
	fake.channel_frees++;
}

static int f_subscribe_devx_event(struct mlx5dv_devx_event_channel *ch, struct mlx5dv_devx_obj *obj,
				  uint16_t events_sz, uint16_t events_num[], uint64_t cookie)
{
	(void)ch;
	int e = failing("mlx5dv_devx_subscribe_devx_event");

	fake.sub_obj = obj;
	fake.sub_events_sz = events_sz;
	fake.sub_first_event = events_sz >= 2 ? events_num[0] : 0xffff;
	fake.sub_cookie = cookie;
	if (e)
		return e;
	fake.subs++;
	return 0;
}

void fake_push_event(uint64_t cookie, const uint8_t *eqe)
{
	uint64_t one = 1;

	fake.ev_cookie = cookie;
	memcpy(fake.ev_eqe, eqe, sizeof(fake.ev_eqe));
	fake.ev_pending++;
	if (write(fake_evch.fd, &one, sizeof(one)) != sizeof(one))
		fake.ev_pending--;
}

static ssize_t f_get_event(struct mlx5dv_devx_event_channel *ch, struct mlx5dv_devx_async_event_hdr *data,
			   size_t len)
{
	uint64_t v;

	if (fake.ev_read_errno) {
		errno = fake.ev_read_errno;
		fake.ev_read_errno = 0;
		return -1;
	}
	if (fake.ev_pending == 0 || read(ch->fd, &v, sizeof(v)) != sizeof(v)) {
		errno = EAGAIN;
		return -1;
	}
	fake.ev_pending--;
	if (len > sizeof(*data) + sizeof(fake.ev_eqe))
		len = sizeof(*data) + sizeof(fake.ev_eqe);
	data->cookie = fake.ev_cookie;
	memcpy(data->out_data, fake.ev_eqe, len - sizeof(*data));
	return len;
}

// ibv_import_device: a context on fake device mlx5_0 whose cmd_fd is the
// descriptor given.
static struct ibv_context fake_imported_ctx;

static struct ibv_context *f_import_device(int fd)
{
	int e = failing("ibv_import_device");

	fake.import_fd = fd;
	if (e) {
		errno = e;
		return NULL;
	}
	fake.imports++;
	memset(&fake_imported_ctx, 0, sizeof(fake_imported_ctx));
	fake_imported_ctx.device = &fake_devs[0];
	fake_imported_ctx.cmd_fd = fd;
	return &fake_imported_ctx;
}

static struct ibv_pd fake_imported_pd;

static struct ibv_pd *f_import_pd(struct ibv_context *c, uint32_t handle)
{
	int e = failing("ibv_import_pd");

	fake.import_pd_handle = handle;
	if (e) {
		errno = e;
		return NULL;
	}
	fake.pd_imports++;
	fake_imported_pd.context = c;
	fake_imported_pd.handle = handle;
	return &fake_imported_pd;
}

static void f_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
	fake.pd_unimports++;
}

static const struct {
	const char *name;
	void *fn;
} fake_fns[] = {
	{"ibv_get_device_list", (void *)f_get_device_list},
	{"ibv_free_device_list", (void *)f_free_device_list},
	{"ibv_get_device_name", (void *)f_get_device_name},
	{"ibv_get_device_guid", (void *)f_get_device_guid},
	{"ibv_close_device", (void *)f_close_device},
	{"ibv_query_device", (void *)f_query_device},
	{"ibv_query_port", (void *)f_query_port_compat},
	{"_ibv_query_gid_ex", (void *)f_query_gid_ex},
	{"ibv_alloc_pd", (void *)f_alloc_pd},
	{"ibv_dealloc_pd", (void *)f_dealloc_pd},
	{"ibv_reg_mr_iova2", (void *)f_reg_mr_iova2},
	{"ibv_reg_dmabuf_mr", (void *)f_reg_dmabuf_mr},
	{"ibv_dereg_mr", (void *)f_dereg_mr},
	{"mlx5dv_is_supported", (void *)f_is_supported},
	{"mlx5dv_open_device", (void *)f_open_device},
	{"mlx5dv_init_obj", (void *)f_init_obj},
	{"mlx5dv_devx_obj_create", (void *)f_obj_create},
	{"mlx5dv_devx_obj_query", (void *)f_obj_query},
	{"mlx5dv_devx_obj_modify", (void *)f_obj_modify},
	{"mlx5dv_devx_obj_destroy", (void *)f_obj_destroy},
	{"mlx5dv_devx_general_cmd", (void *)f_general_cmd},
	{"mlx5dv_devx_umem_reg", (void *)f_umem_reg},
	{"mlx5dv_devx_umem_reg_ex", (void *)f_umem_reg_ex},
	{"mlx5dv_devx_umem_dereg", (void *)f_umem_dereg},
	{"mlx5dv_devx_alloc_uar", (void *)f_alloc_uar},
	{"mlx5dv_devx_free_uar", (void *)f_free_uar},
	{"mlx5dv_devx_query_eqn", (void *)f_query_eqn},
	{"ibv_import_device", (void *)f_import_device},
	{"ibv_import_pd", (void *)f_import_pd},
	{"ibv_unimport_pd", (void *)f_unimport_pd},
	{"mlx5dv_devx_create_event_channel", (void *)f_create_event_channel},
	{"mlx5dv_devx_destroy_event_channel", (void *)f_destroy_event_channel},
	{"mlx5dv_devx_subscribe_devx_event", (void *)f_subscribe_devx_event},
	{"mlx5dv_devx_get_event", (void *)f_get_event},
};

void *fake_fn(const char *name)
{
	for (size_t i = 0; i < sizeof(fake_fns) / sizeof(fake_fns[0]); i++)
		if (strcmp(fake_fns[i].name, name) == 0)
			return fake_fns[i].fn;
	return NULL;
}
