package main

import (
	"io"
	"strings"
	"text/tabwriter"
)

// table writes aligned columns.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	t.row(header...)
	return t
}

func (t *table) row(cells ...string) {
	for i, c := range cells {
		// A tab or newline inside a cell would break the alignment.
		cells[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(c)
	}
	io.WriteString(t.tw, strings.Join(cells, "\t")+"\n")
}

func (t *table) flush() error { return t.tw.Flush() }
