package doctor

// Result is the outcome of one check on one subject.
type Result struct {
	// Name identifies the check ("topology", "acs", "bar1", ...).
	Name string `json:"name"`
	// Subject is what the check looked at when it is per device: an RDMA
	// device name ("mlx5_0"), a GPU ("GPU0 0000:8a:00.0"). Empty for host-wide
	// checks.
	Subject string  `json:"subject,omitempty"`
	Verdict Verdict `json:"verdict"`
	// Value is what was measured, in words a user can compare with the
	// vendor installation guide.
	Value string `json:"value"`
	// Fix says in one or two lines what to do; empty for PASS.
	Fix string `json:"fix,omitempty"`
}

// Report is the list of results of one Run, in the order the checks ran.
type Report struct {
	Results []Result `json:"checks"`
}

// Failed reports whether any check failed.
func (r Report) Failed() bool {
	for _, res := range r.Results {
		if res.Verdict == Fail {
			return true
		}
	}
	return false
}

// Count returns how many results have verdict v.
func (r Report) Count(v Verdict) int {
	n := 0
	for _, res := range r.Results {
		if res.Verdict == v {
			n++
		}
	}
	return n
}

// Find returns the results of the named check, in order.
func (r Report) Find(name string) []Result {
	var out []Result
	for _, res := range r.Results {
		if res.Name == name {
			out = append(out, res)
		}
	}
	return out
}
