package devstruct

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The layout table holds exactly the layouts (offset, size) of the device
// structs: DOCA 2.0's, the DOCA SDK's receive-queue block, our extension area; sizes of whole structs use offset
// 0, alignments are in the ".align" entries. Every entry of the C table has
// an expectation here and every expectation an entry.
func TestLayoutTable(t *testing.T) {
	want := map[string][2]uintptr{
		"doca_gpu_dev_verbs_qp":                      {0, 392},
		"doca_gpu_dev_verbs_qp.align":                {0, 8},
		"doca_gpu_dev_verbs_qp.sq_rsvd_index":        {0, 8},
		"doca_gpu_dev_verbs_qp.sq_ready_index":       {8, 8},
		"doca_gpu_dev_verbs_qp.sq_wqe_pi":            {16, 8},
		"doca_gpu_dev_verbs_qp.sq_num":               {24, 4},
		"doca_gpu_dev_verbs_qp.sq_num_shift8":        {28, 4},
		"doca_gpu_dev_verbs_qp.sq_num_shift8_be":     {32, 4},
		"doca_gpu_dev_verbs_qp.sq_num_shift8_be_1ds": {36, 4},
		"doca_gpu_dev_verbs_qp.sq_num_shift8_be_2ds": {40, 4},
		"doca_gpu_dev_verbs_qp.sq_num_shift8_be_3ds": {44, 4},
		"doca_gpu_dev_verbs_qp.sq_num_shift8_be_4ds": {48, 4},
		"doca_gpu_dev_verbs_qp.sq_num_shift8_be_5ds": {52, 4},
		"doca_gpu_dev_verbs_qp.sq_lock":              {56, 4},
		"doca_gpu_dev_verbs_qp.sq_wqe_num":           {60, 2},
		"doca_gpu_dev_verbs_qp.sq_wqe_mask":          {62, 2},
		"doca_gpu_dev_verbs_qp.sq_wqe_daddr":         {64, 8},
		"doca_gpu_dev_verbs_qp.sq_dbrec":             {72, 8},
		"doca_gpu_dev_verbs_qp.sq_db":                {80, 8},
		"doca_gpu_dev_verbs_qp.rq_num":               {88, 4},
		"doca_gpu_dev_verbs_qp.rq_reserved0":         {92, 4},
		"doca_gpu_dev_verbs_qp.rq_wqe_pi":            {96, 8},
		"doca_gpu_dev_verbs_qp.rq_wqe_num":           {104, 4},
		"doca_gpu_dev_verbs_qp.rq_wqe_mask":          {108, 4},
		"doca_gpu_dev_verbs_qp.rq_wqe_daddr":         {112, 8},
		"doca_gpu_dev_verbs_qp.rq_dbrec":             {120, 8},
		"doca_gpu_dev_verbs_qp.rcv_wqe_size":         {128, 4},
		"doca_gpu_dev_verbs_qp.rq_reserved1":         {132, 4},
		"doca_gpu_dev_verbs_qp.rq_rsvd_index":        {136, 8},
		"doca_gpu_dev_verbs_qp.rq_ready_index":       {144, 8},
		"doca_gpu_dev_verbs_qp.rq_lock":              {152, 4},
		"doca_gpu_dev_verbs_qp.rq_reserved2":         {156, 4},
		"doca_gpu_dev_verbs_qp.cq_sq":                {160, 64},
		"doca_gpu_dev_verbs_qp.cq_rq":                {224, 64},
		"doca_gpu_dev_verbs_qp.nic_handler":          {288, 4},
		"doca_gpu_dev_verbs_qp.mem_type":             {292, 4},
		"doca_gpu_dev_verbs_qp.need_mcst":            {296, 1},
		"doca_gpu_dev_verbs_qp.need_dump":            {296, 1},
		"doca_gpu_dev_verbs_qp.reserved_mcst":        {297, 7},
		"doca_gpu_dev_verbs_qp.last_get_wqe_idx":     {304, 8},
		"doca_gpu_dev_verbs_qp.last_dump_wqe_idx":    {312, 8},
		"doca_gpu_dev_verbs_qp.last_recv_wqe_idx":    {320, 8},
		"doca_gpu_dev_verbs_qp.gdaki":                {328, 64},

		"doca_gpu_dev_verbs_cq":             {0, 64},
		"doca_gpu_dev_verbs_cq.align":       {0, 8},
		"doca_gpu_dev_verbs_cq.cqe_daddr":   {0, 8},
		"doca_gpu_dev_verbs_cq.cq_num":      {8, 4},
		"doca_gpu_dev_verbs_cq.cqe_num":     {12, 4},
		"doca_gpu_dev_verbs_cq.dbrec":       {16, 8},
		"doca_gpu_dev_verbs_cq.cqe_ci":      {24, 8},
		"doca_gpu_dev_verbs_cq.cqe_mask":    {32, 4},
		"doca_gpu_dev_verbs_cq.cqe_size":    {36, 1},
		"doca_gpu_dev_verbs_cq.reserved1":   {37, 3},
		"doca_gpu_dev_verbs_cq.gdaki_flags": {37, 1},
		"doca_gpu_dev_verbs_cq.cqe_rsvd":    {40, 8},
		"doca_gpu_dev_verbs_cq.mem_type":    {48, 4},
		"doca_gpu_dev_verbs_cq.reserved2":   {52, 12},

		"gdaki_dev_qp_ext":              {0, 64},
		"gdaki_dev_qp_ext.align":        {0, 8},
		"gdaki_dev_qp_ext.error":        {0, 24},
		"gdaki_dev_qp_ext.poll_timeout": {24, 8},
		"gdaki_dev_qp_ext.reserved":     {32, 32},

		"gdaki_dev_qp_error":                  {0, 24},
		"gdaki_dev_qp_error.align":            {0, 8},
		"gdaki_dev_qp_error.status":           {0, 4},
		"gdaki_dev_qp_error.syndrome":         {4, 1},
		"gdaki_dev_qp_error.vendor_syndrome":  {5, 1},
		"gdaki_dev_qp_error.hw_syndrome":      {6, 1},
		"gdaki_dev_qp_error.hw_syndrome_type": {7, 1},
		"gdaki_dev_qp_error.cqe_opcode":       {8, 1},
		"gdaki_dev_qp_error.wqe_opcode":       {9, 1},
		"gdaki_dev_qp_error.wqe_counter":      {10, 2},
		"gdaki_dev_qp_error.reserved":         {12, 4},
		"gdaki_dev_qp_error.wqe_index":        {16, 8},

		"doca_gpu_dev_verbs_atomic_32_masked_fa_seg_t":                {0, 16},
		"doca_gpu_dev_verbs_atomic_32_masked_fa_seg_t.add_data":       {0, 4},
		"doca_gpu_dev_verbs_atomic_32_masked_fa_seg_t.field_boundary": {4, 4},
		"doca_gpu_dev_verbs_atomic_32_masked_fa_seg_t.reserved":       {8, 8},
		"doca_gpu_dev_verbs_atomic_64_masked_fa_seg_t":                {0, 16},
		"doca_gpu_dev_verbs_atomic_64_masked_fa_seg_t.add_data":       {0, 8},
		"doca_gpu_dev_verbs_atomic_64_masked_fa_seg_t.field_boundary": {8, 8},
		"doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t":                {0, 16},
		"doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t.swap_data":      {0, 4},
		"doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t.compare_data":   {4, 4},
		"doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t.swap_mask":      {8, 4},
		"doca_gpu_dev_verbs_atomic_32_masked_cs_seg_t.compare_mask":   {12, 4},
		"doca_gpu_dev_verbs_atomic_64_masked_cs_seg_t":                {0, 16},
		"doca_gpu_dev_verbs_atomic_64_masked_cs_seg_t.swap":           {0, 8},
		"doca_gpu_dev_verbs_atomic_64_masked_cs_seg_t.compare":        {8, 8},

		"doca_gpu_dev_verbs_wqe":           {0, 64},
		"doca_gpu_dev_verbs_wqe.align":     {0, 8},
		"doca_gpu_dev_verbs_wqe.inl_data":  {0, 64},
		"doca_gpu_dev_verbs_wqe.dseg0":     {0, 16},
		"doca_gpu_dev_verbs_wqe.dseg1":     {16, 16},
		"doca_gpu_dev_verbs_wqe.dseg2":     {32, 16},
		"doca_gpu_dev_verbs_wqe.dseg3":     {48, 16},
		"doca_gpu_dev_verbs_wqe.rw_cseg":   {0, 16},
		"doca_gpu_dev_verbs_wqe.rw_rseg":   {16, 16},
		"doca_gpu_dev_verbs_wqe.rw_dseg0":  {32, 16},
		"doca_gpu_dev_verbs_wqe.rw_dseg1":  {48, 16},
		"doca_gpu_dev_verbs_wqe.at_cseg":   {0, 16},
		"doca_gpu_dev_verbs_wqe.at_rseg":   {16, 16},
		"doca_gpu_dev_verbs_wqe.at_seg":    {32, 16},
		"doca_gpu_dev_verbs_wqe.at_dseg":   {48, 16},
		"doca_gpu_dev_verbs_wqe.snd_cseg":  {0, 16},
		"doca_gpu_dev_verbs_wqe.snd_dseg0": {16, 16},
		"doca_gpu_dev_verbs_wqe.snd_dseg1": {32, 16},
		"doca_gpu_dev_verbs_wqe.snd_dseg2": {48, 16},
		"doca_gpu_dev_verbs_wqe.wait_cseg": {0, 16},
		"doca_gpu_dev_verbs_wqe.wait_dseg": {16, 16},
		"doca_gpu_dev_verbs_wqe.padding0":  {32, 16},
		"doca_gpu_dev_verbs_wqe.padding1":  {48, 16},

		"doca_gpu_dev_verbs_addr":       {0, 16},
		"doca_gpu_dev_verbs_addr.align": {0, 8},
		"doca_gpu_dev_verbs_addr.addr":  {0, 8},
		"doca_gpu_dev_verbs_addr.key":   {8, 4},

		"doca_gpunetio_ib_mlx5_wqe_ctrl_seg":                       {0, 16},
		"doca_gpunetio_ib_mlx5_wqe_ctrl_seg.align":                 {0, 4},
		"doca_gpunetio_ib_mlx5_wqe_ctrl_seg.opmod_idx_opcode":      {0, 4},
		"doca_gpunetio_ib_mlx5_wqe_ctrl_seg.qpn_ds":                {4, 4},
		"doca_gpunetio_ib_mlx5_wqe_ctrl_seg.signature":             {8, 1},
		"doca_gpunetio_ib_mlx5_wqe_ctrl_seg.dci_stream_channel_id": {9, 2},
		"doca_gpunetio_ib_mlx5_wqe_ctrl_seg.fm_ce_se":              {11, 1},
		"doca_gpunetio_ib_mlx5_wqe_ctrl_seg.signature_fm_ce_se":    {8, 4},
		"doca_gpunetio_ib_mlx5_wqe_ctrl_seg.imm":                   {12, 4},

		"doca_gpunetio_ib_mlx5_wqe_data_seg":            {0, 16},
		"doca_gpunetio_ib_mlx5_wqe_data_seg.align":      {0, 1},
		"doca_gpunetio_ib_mlx5_wqe_data_seg.byte_count": {0, 4},
		"doca_gpunetio_ib_mlx5_wqe_data_seg.lkey":       {4, 4},
		"doca_gpunetio_ib_mlx5_wqe_data_seg.addr":       {8, 8},
		"doca_gpunetio_ib_mlx5_wqe_raddr_seg":           {0, 16},
		"doca_gpunetio_ib_mlx5_wqe_raddr_seg.raddr":     {0, 8},
		"doca_gpunetio_ib_mlx5_wqe_raddr_seg.rkey":      {8, 4},
		"doca_gpunetio_ib_mlx5_wqe_raddr_seg.reserved":  {12, 4},
		"doca_gpunetio_ib_mlx5_wqe_atomic_seg":          {0, 16},
		"doca_gpunetio_ib_mlx5_wqe_atomic_seg.swap_add": {0, 8},
		"doca_gpunetio_ib_mlx5_wqe_atomic_seg.compare":  {8, 8},
		"doca_gpunetio_ib_mlx5_wqe_inl_data_seg":        {0, 4},
		"doca_gpunetio_ib_mlx5_wqe_wait_seg":            {0, 16},
		"doca_gpunetio_ib_mlx5_wqe_wait_seg.resv":       {0, 8},
		"doca_gpunetio_ib_mlx5_wqe_wait_seg.max_index":  {8, 4},
		"doca_gpunetio_ib_mlx5_wqe_wait_seg.qpn_cqn":    {12, 4},

		"doca_gpunetio_ib_mlx5_tm_cqe":              {0, 20},
		"doca_gpunetio_ib_mlx5_tm_cqe.align":        {0, 4},
		"doca_gpunetio_ib_mlx5_tm_cqe.success":      {0, 4},
		"doca_gpunetio_ib_mlx5_tm_cqe.hw_phase_cnt": {4, 2},
		"doca_gpunetio_ib_mlx5_tm_cqe.rsvd0":        {6, 12},
		"doca_gpunetio_ib_ibv_tmh":                  {0, 16},
		"doca_gpunetio_ib_ibv_tmh.align":            {0, 8},
		"doca_gpunetio_ib_ibv_tmh.opcode":           {0, 1},
		"doca_gpunetio_ib_ibv_tmh.reserved":         {1, 3},
		"doca_gpunetio_ib_ibv_tmh.app_ctx":          {4, 4},
		"doca_gpunetio_ib_ibv_tmh.tag":              {8, 8},

		"doca_gpunetio_ib_mlx5_cqe64":                 {0, 64},
		"doca_gpunetio_ib_mlx5_cqe64.align":           {0, 8},
		"doca_gpunetio_ib_mlx5_cqe64.wqe_id":          {2, 2},
		"doca_gpunetio_ib_mlx5_cqe64.ml_path":         {17, 1},
		"doca_gpunetio_ib_mlx5_cqe64.slid":            {22, 2},
		"doca_gpunetio_ib_mlx5_cqe64.flags_rqpn":      {24, 4},
		"doca_gpunetio_ib_mlx5_cqe64.hds_ip_ext":      {28, 1},
		"doca_gpunetio_ib_mlx5_cqe64.l4_hdr_type_etc": {29, 1},
		"doca_gpunetio_ib_mlx5_cqe64.vlan_info":       {30, 2},
		"doca_gpunetio_ib_mlx5_cqe64.tm_cqe":          {0, 20},
		"doca_gpunetio_ib_mlx5_cqe64.tmh":             {0, 16},
		"doca_gpunetio_ib_mlx5_cqe64.srqn_uidx":       {32, 4},
		"doca_gpunetio_ib_mlx5_cqe64.imm_inval_pkey":  {36, 4},
		"doca_gpunetio_ib_mlx5_cqe64.app":             {40, 1},
		"doca_gpunetio_ib_mlx5_cqe64.app_op":          {41, 1},
		"doca_gpunetio_ib_mlx5_cqe64.app_info":        {42, 2},
		"doca_gpunetio_ib_mlx5_cqe64.byte_cnt":        {44, 4},
		"doca_gpunetio_ib_mlx5_cqe64.timestamp":       {48, 8},
		"doca_gpunetio_ib_mlx5_cqe64.sop_drop_qpn":    {56, 4},
		"doca_gpunetio_ib_mlx5_cqe64.wqe_counter":     {60, 2},
		"doca_gpunetio_ib_mlx5_cqe64.signature":       {62, 1},
		"doca_gpunetio_ib_mlx5_cqe64.op_own":          {63, 1},

		"doca_gpunetio_ib_mlx5_err_cqe_ex":                  {0, 64},
		"doca_gpunetio_ib_mlx5_err_cqe_ex.align":            {0, 4},
		"doca_gpunetio_ib_mlx5_err_cqe_ex.rsvd0":            {0, 32},
		"doca_gpunetio_ib_mlx5_err_cqe_ex.srqn":             {32, 4},
		"doca_gpunetio_ib_mlx5_err_cqe_ex.rsvd1":            {36, 16},
		"doca_gpunetio_ib_mlx5_err_cqe_ex.hw_err_synd":      {52, 1},
		"doca_gpunetio_ib_mlx5_err_cqe_ex.hw_synd_type":     {53, 1},
		"doca_gpunetio_ib_mlx5_err_cqe_ex.vendor_err_synd":  {54, 1},
		"doca_gpunetio_ib_mlx5_err_cqe_ex.syndrome":         {55, 1},
		"doca_gpunetio_ib_mlx5_err_cqe_ex.s_wqe_opcode_qpn": {56, 4},
		"doca_gpunetio_ib_mlx5_err_cqe_ex.wqe_counter":      {60, 2},
		"doca_gpunetio_ib_mlx5_err_cqe_ex.signature":        {62, 1},
		"doca_gpunetio_ib_mlx5_err_cqe_ex.op_own":           {63, 1},
	}
	got := Layout()
	require.NotEmpty(t, got)
	seen := map[string]bool{}
	for _, f := range got {
		w, ok := want[f.Name]
		if !assert.Truef(t, ok, "layout table entry %q has no expectation", f.Name) {
			continue
		}
		seen[f.Name] = true
		assert.Equalf(t, w[0], f.Offset, "%s offset", f.Name)
		assert.Equalf(t, w[1], f.Size, "%s size", f.Name)
	}
	for name := range want {
		assert.Truef(t, seen[name], "%s missing from the C layout table", name)
	}
	require.Equal(t, uintptr(QPSize), want["doca_gpu_dev_verbs_qp"][1])
	require.Equal(t, uintptr(CQSize), want["doca_gpu_dev_verbs_cq"][1])

	f, ok := LayoutOf("doca_gpu_dev_verbs_qp.cq_sq")
	require.True(t, ok)
	assert.Equal(t, uintptr(OffsetCQSQ), f.Offset)
	assert.Equal(t, [6]int{0, 8, 56, 24, 40, 37},
		[6]int{OffsetSQRsvdIndex, OffsetSQReadyIndex, OffsetSQLock, OffsetCQECI, OffsetCQERsvd, OffsetCQFlags})
	_, ok = LayoutOf("doca_gpu_dev_verbs_qp.no_such_field")
	assert.False(t, ok)
}
