package verbs

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goNames collects the exported functions, types, methods (Type.Method) and
// struct fields (Type.Field) declared in this package's non-test sources.
func goNames(t *testing.T) map[string]bool {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						names[d.Name.Name] = true
						continue
					}
					rt := d.Recv.List[0].Type
					if s, ok := rt.(*ast.StarExpr); ok {
						rt = s.X
					}
					if id, ok := rt.(*ast.Ident); ok {
						names[id.Name+"."+d.Name.Name] = true
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						ts, ok := s.(*ast.TypeSpec)
						if !ok {
							continue
						}
						names[ts.Name.Name] = true
						st, ok := ts.Type.(*ast.StructType)
						if !ok {
							continue
						}
						for _, fld := range st.Fields.List {
							for _, n := range fld.Names {
								names[ts.Name.Name+"."+n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return names
}

// readFunctionList reads a list of C function names, one per line ('#'
// starts a comment line).
func readFunctionList(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c := strings.TrimSpace(sc.Text())
		if c == "" || strings.HasPrefix(c, "#") {
			continue
		}
		names = append(names, c)
	}
	require.NoError(t, sc.Err())
	return names
}

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
	want := readFunctionList(t, "testdata/doca_verbs_3.0_functions.txt")
	require.Len(t, want, 134, "the 3.0 doca_verbs.h function list")
	require.Len(t, removedIn30, 34)
	inList := map[string]bool{}
	for _, c := range want {
		inList[c] = true
	}
	mapped := map[string]string{}
	for _, e := range DOCAFunctions {
		_, dup := mapped[e.C]
		assert.False(t, dup, "%s mapped twice", e.C)
		mapped[e.C] = e.Go
		assert.True(t, inList[e.C], "%s is not a DOCA GPUNetIO 3.0 function", e.C)
	}
	for _, c := range want {
		_, ok := mapped[c]
		assert.True(t, ok, "DOCA function %s has no Go counterpart in DOCAFunctions", c)
	}
	for _, c := range removedIn30 {
		assert.False(t, inList[c], "%s was removed in 3.0 but is in the list", c)
		_, ok := mapped[c]
		assert.False(t, ok, "%s was removed in 3.0 but is mapped", c)
	}
	assert.Len(t, DOCAFunctions, len(want))

	names := goNames(t)
	for _, e := range DOCAFunctions {
		assert.True(t, names[e.Go], "%s maps to %s, which does not exist", e.C, e.Go)
	}
}
