package verbs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gdaki/gpunetio/internal/apicheck"
)

// removedIn30 are the doca_verbs.h names DOCA GPUNetIO 3.0 removed.
var removedIn30 = []string{
	"doca_verbs_cq_attr_set_external_dbr_umem", "doca_verbs_qp_get_send_dbr_mode",
	"doca_verbs_qp_attr_set_allow_remote_atomic", "doca_verbs_qp_attr_get_allow_remote_atomic",
	"doca_verbs_qp_init_attr_set_external_dbr_umem",
	"doca_verbs_qp_attr_get_path_mtu", "doca_verbs_qp_attr_get_rq_psn", "doca_verbs_qp_attr_get_sq_psn",
	"doca_verbs_qp_attr_get_dest_qp_num", "doca_verbs_qp_attr_get_allow_remote_write",
	"doca_verbs_qp_attr_get_allow_remote_read", "doca_verbs_qp_attr_get_ah_attr",
	"doca_verbs_qp_attr_get_pkey_index", "doca_verbs_qp_attr_get_port_num", "doca_verbs_qp_attr_get_ack_timeout",
	"doca_verbs_qp_attr_get_retry_cnt", "doca_verbs_qp_attr_get_rnr_retry", "doca_verbs_qp_attr_get_min_rnr_timer",
	"doca_verbs_qp_init_attr_get_pd", "doca_verbs_qp_init_attr_get_send_cq", "doca_verbs_qp_init_attr_get_receive_cq",
	"doca_verbs_qp_init_attr_get_sq_sig_all", "doca_verbs_qp_init_attr_get_sq_wr", "doca_verbs_qp_init_attr_get_rq_wr",
	"doca_verbs_qp_init_attr_get_send_max_sges", "doca_verbs_qp_init_attr_get_receive_max_sges",
	"doca_verbs_qp_init_attr_get_max_inline_data", "doca_verbs_qp_init_attr_get_user_index",
	"doca_verbs_qp_init_attr_get_qp_type", "doca_verbs_qp_init_attr_get_external_umem",
	"doca_verbs_qp_init_attr_get_external_uar", "doca_verbs_qp_init_attr_get_qp_context",
	"doca_verbs_qp_init_attr_get_srq", "doca_verbs_qp_init_attr_get_core_direct_master",
}

// TestDOCAFunctionMapIsThe30API checks DOCAFunctions against the list of
// DOCA GPUNetIO 3.0's doca_verbs.h functions: every one mapped, nothing
// else (none of the names 3.0 removed), each once, to a Go name that
// exists.
func TestDOCAFunctionMapIsThe30API(t *testing.T) {
	want, err := apicheck.ReadNames("testdata/doca_verbs_3.0_functions.txt")
	require.NoError(t, err)
	require.Len(t, want, 134, "the 3.0 doca_verbs.h function list")
	require.Len(t, removedIn30, 34)
	names, err := apicheck.GoNames(".")
	require.NoError(t, err)
	assert.Empty(t, apicheck.FuncMapProblems(DOCAFunctions, want, names))
	inList, mapped := map[string]bool{}, map[string]bool{}
	for _, c := range want {
		inList[c] = true
	}
	for _, e := range DOCAFunctions {
		mapped[e.C] = true
	}
	for _, c := range removedIn30 {
		assert.False(t, inList[c], "%s was removed in 3.0 but is in the list", c)
		assert.False(t, mapped[c], "%s was removed in 3.0 but is mapped", c)
	}
	assert.Len(t, DOCAFunctions, len(want))
}

// TestDOCAEventFunctionMap checks DOCAEventFunctions: exactly the SDK's
// completion-channel and asynchronous-event functions, each once, to a Go
// name that exists.
func TestDOCAEventFunctionMap(t *testing.T) {
	want := []string{
		"doca_verbs_comp_channel_create", "doca_verbs_comp_channel_destroy", "doca_verbs_comp_channel_get_handle",
		"doca_verbs_cq_attr_set_comp_channel", "doca_verbs_cq_attr_get_comp_channel", "doca_verbs_req_notify_cq",
		"doca_verbs_get_cq_event", "doca_verbs_ack_cq_events",
		"doca_verbs_get_async_event_handle", "doca_verbs_get_async_event", "doca_verbs_ack_async_event",
	}
	names, err := apicheck.GoNames(".")
	require.NoError(t, err)
	assert.Empty(t, apicheck.FuncMapProblems(DOCAEventFunctions, want, names))
	in30 := map[string]bool{}
	for _, e := range DOCAFunctions {
		in30[e.C] = true
	}
	for _, e := range DOCAEventFunctions {
		assert.False(t, in30[e.C], "%s is in the 3.0 map too", e.C)
	}
}

// TestDOCASDKFunctionMap checks DOCASDKFunctions, DOCAEventFunctions and
// DOCASDKNotProvided against the list of the SDK's host functions beyond
// 3.0: together they name every one, each once and nothing else; every
// mapped Go name exists; none is also a 3.0 name; every unprovided one has
// a reason.
func TestDOCASDKFunctionMap(t *testing.T) {
	want, err := apicheck.ReadNames("testdata/doca_verbs_sdk_host_functions.txt")
	require.NoError(t, err)
	names, err := apicheck.GoNames(".")
	require.NoError(t, err)
	mapped := append(append([]struct{ C, Go string }{}, DOCASDKFunctions...), DOCAEventFunctions...)
	for _, e := range DOCASDKNotProvided {
		assert.NotEmpty(t, e.Why, e.C)
		// Stand-in Go name that exists, so the list check counts it.
		mapped = append(mapped, struct{ C, Go string }{e.C, "DOCASDKNotProvided"})
	}
	names["DOCASDKNotProvided"] = true
	assert.Empty(t, apicheck.FuncMapProblems(mapped, want, names))
	in30 := map[string]bool{}
	for _, e := range DOCAFunctions {
		in30[e.C] = true
	}
	for _, e := range mapped {
		assert.False(t, in30[e.C], "%s is a 3.0 name", e.C)
	}
	assert.Len(t, mapped, len(want))
}
