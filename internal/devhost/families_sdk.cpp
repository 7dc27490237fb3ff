// The SDK-style corpus (SDK 3.2, 3.3, 3.4) built as an SDK-family kernel would be with our
// headers: GDAKI_DOCA_FAMILY_SDK, flat bare-name includes.
#define GDAKI_DOCA_FAMILY_SDK 1
#define CORPUS_INCLUDE_STYLE 1
#include "../../cuda/test/corpus/sdk32.cu"
#include "../../cuda/test/corpus/sdk33.cu"
#include "../../cuda/test/corpus/sdk34.cu"
#include "families.h"

#include "families_common.inc"

extern "C" {

uint64_t devhost_sdk32_put_wait(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
				uint32_t lkey, uint64_t size)
{
	return corpus_sdk32_put_wait(qp, fam_addr(raddr, rkey), fam_addr(laddr, lkey), size);
}

uint64_t devhost_sdk32_get_wait(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
				uint32_t lkey, uint64_t size, uint64_t daddr, uint32_t dkey)
{
	return corpus_sdk32_get_wait(qp, fam_addr(raddr, rkey), fam_addr(laddr, lkey), size, fam_addr(daddr, dkey));
}

uint32_t devhost_sdk33_write_lowlevel(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
				      uint32_t lkey, uint32_t size, uint64_t *ticket)
{
	return corpus_sdk33_write_lowlevel(qp, raddr, rkey, laddr, lkey, size, ticket);
}

void devhost_sdk33_put_counter(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			       uint32_t lkey, uint64_t size, struct doca_gpu_dev_verbs_qp *companion, uint64_t craddr,
			       uint32_t crkey, uint64_t claddr, uint32_t clkey, uint64_t val)
{
	corpus_sdk33_put_counter(qp, fam_addr(raddr, rkey), fam_addr(laddr, lkey), size, companion,
				 fam_addr(craddr, crkey), fam_addr(claddr, clkey), val);
}

uint64_t devhost_sdk33_p_signal(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t value,
				uint64_t sraddr, uint32_t srkey, uint64_t sladdr, uint32_t slkey, uint64_t sig_val)
{
	return corpus_sdk33_p_signal(qp, fam_addr(raddr, rkey), value, fam_addr(sraddr, srkey), fam_addr(sladdr, slkey),
				     sig_val);
}

uint64_t devhost_sdk34_put_nop(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			       uint32_t lkey, uint64_t size)
{
	return corpus_sdk34_put_nop(qp, fam_addr(raddr, rkey), fam_addr(laddr, lkey), size);
}

int devhost_sdk_nic_handler_value(int which)
{
	return fam_nic_handler_value(which);
}

int devhost_sdk_qp_nic_handler(struct doca_gpu_dev_verbs_qp *qp)
{
	return (int)gdaki_dev_qp_nic_handler(qp);
}
}
