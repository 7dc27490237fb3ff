// The open-source-style corpus (GPUNetIO 2.0/3.0 and NCCL's copy), sub-directory includes.
#define CORPUS_INCLUDE_STYLE 3
#include "../../cuda/test/corpus/os.cu"
#include "../../cuda/test/corpus/nccl.cu"
#include "families.h"

#include "families_common.inc"

extern "C" {

uint64_t devhost_os_put_wait(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			     uint32_t lkey, uint64_t size)
{
	return corpus_os_put_wait(qp, fam_addr(raddr, rkey), fam_addr(laddr, lkey), size);
}

void devhost_os_put_counter(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			    uint32_t lkey, uint64_t size, struct doca_gpu_dev_verbs_qp *companion, uint64_t craddr,
			    uint32_t crkey, uint64_t claddr, uint32_t clkey, uint64_t val)
{
	corpus_os_put_counter(qp, fam_addr(raddr, rkey), fam_addr(laddr, lkey), size, companion, fam_addr(craddr, crkey),
			      fam_addr(claddr, clkey), val);
}

uint32_t devhost_os_write_fenced(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
				 uint32_t lkey, uint32_t size, uint64_t *ticket)
{
	return corpus_os_write_fenced(qp, raddr, rkey, laddr, lkey, size, ticket);
}

uint64_t devhost_nccl_get_mcst(struct doca_gpu_dev_verbs_qp *qp, uint64_t raddr, uint32_t rkey, uint64_t laddr,
			       uint32_t lkey, uint64_t size, uint64_t daddr, uint32_t dkey)
{
	return corpus_nccl_get_mcst(qp, fam_addr(raddr, rkey), fam_addr(laddr, lkey), size, fam_addr(daddr, dkey));
}

int devhost_os_nic_handler_value(int which)
{
	return fam_nic_handler_value(which);
}

int devhost_os_qp_nic_handler(struct doca_gpu_dev_verbs_qp *qp)
{
	return (int)gdaki_dev_qp_nic_handler(qp);
}
}
