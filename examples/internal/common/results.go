package common

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// BWRow is one line of a bandwidth table.
type BWRow struct {
	Bytes       uint64  `json:"bytes"`
	Iterations  uint32  `json:"iterations"`
	BWGbps      float64 `json:"bw_gbps"`
	MsgRateMpps float64 `json:"msg_rate_mpps"`
	KernelMs    float64 `json:"kernel_ms"`
}

// NewBWRow computes a bandwidth row from the measured kernel time:
// BW[Gbps] = bytes*iters/ms*1000*8/1e9, MsgRate[Mpps] = iters/ms*1000/1e6.
func NewBWRow(bytes uint64, iters uint32, kernel time.Duration) BWRow {
	ms := durationMs(kernel)
	r := BWRow{Bytes: bytes, Iterations: iters, KernelMs: ms}
	if ms > 0 {
		r.BWGbps = float64(bytes) * float64(iters) / ms * 1000 * 8 / 1e9
		r.MsgRateMpps = float64(iters) / ms * 1000 / 1e6
	}
	return r
}

// LatRow is one line of the latency table.
type LatRow struct {
	Bytes       uint64  `json:"bytes"`
	Iterations  uint32  `json:"iterations"`
	OneWayUs    float64 `json:"unidirectional_usec"`
	RoundTripUs float64 `json:"bidirectional_usec"`
	KernelUs    float64 `json:"kernel_usec"`
}

// NewLatRow computes a latency row from the kernel time of iters round
// trips: one way = us/(2*iters), round trip = us/iters.
func NewLatRow(bytes uint64, iters uint32, kernel time.Duration) LatRow {
	us := durationMs(kernel) * 1000
	r := LatRow{Bytes: bytes, Iterations: iters, KernelUs: us}
	if iters > 0 {
		r.OneWayUs = us / (2 * float64(iters))
		r.RoundTripUs = us / float64(iters)
	}
	return r
}

func durationMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// The perftest-like table text of the reference examples.
const (
	bwHeader  = " #bytes     #iterations    BW average[Gbps]   MsgRate[Mpps]    CUDA Kernel[ms]"
	latHeader = " #bytes \t#iterations    Unidirectional[usec]    Bidirectional[usec]    CUDA Kernel[usec]"
)

// WriteBWHeader prints the bandwidth table header.
func WriteBWHeader(w io.Writer) { writeHeader(w, bwHeader, 84) }

// writeHeader prints header between two rules of width dashes.
func writeHeader(w io.Writer, header string, width int) {
	line := strings.Repeat("-", width)
	fmt.Fprintf(w, "%s\n%s\n%s\n", line, header, line)
}

// WriteBWRow prints one bandwidth row in the reference's format.
func WriteBWRow(w io.Writer, r BWRow) {
	fmt.Fprintf(w, " %-7d    \t%-7d           %-7.6f            %-7.6f            %-7.6f\n",
		r.Bytes, r.Iterations, r.BWGbps, r.MsgRateMpps, r.KernelMs)
}

// WriteLatHeader prints the latency table header.
func WriteLatHeader(w io.Writer) { writeHeader(w, latHeader, 94) }

// WriteLatRow prints one latency row in the reference's format.
func WriteLatRow(w io.Writer, r LatRow) {
	fmt.Fprintf(w, " %-7d \t\t%-7d          %-7.2f       \t\t%-7.2f    \t \t%-7.2f\n",
		r.Bytes, r.Iterations, r.OneWayUs, r.RoundTripUs, r.KernelUs)
}

// Report is the content of a -o results file.
type Report struct {
	Program    string   `json:"program"`
	Role       string   `json:"role"`
	Device     string   `json:"device"`
	GPU        string   `json:"gpu"`
	NICHandler string   `json:"nic_handler"`          // the resolved handler
	ExecScope  string   `json:"exec_scope,omitempty"` // put_bw
	Iterations uint32   `json:"iterations"`
	BW         []BWRow  `json:"bandwidth,omitempty"`
	Lat        []LatRow `json:"latency,omitempty"`
	ErrorCQEs  uint32   `json:"error_cqes"`
	Validation string   `json:"validation,omitempty"` // server of the BW tests
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write JSON results: %w", err)
	}
	return nil
}

// WriteCSV writes one CSV line per table row, with a header line; the
// columns are those of the printed table plus the run's identity.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	id := []string{r.Program, r.Role, r.Device, r.GPU, r.NICHandler, r.ExecScope}
	idHead := []string{"program", "role", "device", "gpu", "nic_handler", "exec_scope"}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	var rows [][]string
	if len(r.Lat) > 0 {
		rows = append(rows, append(idHead, "bytes", "iterations", "unidirectional_usec", "bidirectional_usec", "kernel_usec"))
		for _, x := range r.Lat {
			rows = append(rows, append(append([]string(nil), id...), u(x.Bytes), u(uint64(x.Iterations)), f(x.OneWayUs), f(x.RoundTripUs), f(x.KernelUs)))
		}
	} else {
		rows = append(rows, append(idHead, "bytes", "iterations", "bw_gbps", "msg_rate_mpps", "kernel_ms"))
		for _, x := range r.BW {
			rows = append(rows, append(append([]string(nil), id...), u(x.Bytes), u(uint64(x.Iterations)), f(x.BWGbps), f(x.MsgRateMpps), f(x.KernelMs)))
		}
	}
	if err := cw.WriteAll(rows); err != nil {
		return fmt.Errorf("write CSV results: %w", err)
	}
	return nil
}

// Save writes the report to path in format f (atomically: a temporary file
// renamed over path).
func (r *Report) Save(path string, f Format) error {
	tmp, err := os.CreateTemp(dirOf(path), ".results-*")
	if err != nil {
		return fmt.Errorf("write results %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	switch f {
	case FormatJSON:
		err = r.WriteJSON(tmp)
	case FormatCSV:
		err = r.WriteCSV(tmp)
	default:
		err = fmt.Errorf("unknown format %q: %w", f, ErrUsage)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write results %s: %w", path, err)
	}
	return nil
}

func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		if i == 0 {
			return "/"
		}
		return path[:i]
	}
	return "."
}
