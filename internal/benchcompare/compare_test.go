package main

import (
	"strings"
	"testing"
	"time"
)

// TestCompareReportMoto: the × moto columns, their explanation and the targets appear only
// when moto is among the systems, and a single replica is one process.
func TestCompareReportMoto(t *testing.T) {
	cfg := &config{rounds: 1, duration: time.Second, timeScale: 0.001, serverCPU: "0"}
	fs := &fsyncResult{N: 1, Min: time.Millisecond, P50: time.Millisecond, P99: time.Millisecond}
	round := []loadResult{{OK: 1000, Elapsed: time.Second, Latencies: []time.Duration{time.Millisecond}}}
	sqlite := &simSystem{label: "lifecyclesim SQLite"}
	pg1 := &replicaSystem{simSystem: simSystem{label: "lifecyclesim PostgreSQL ×1"}, srvs: make([]*server, 1)}
	pg2 := &replicaSystem{simSystem: simSystem{label: "lifecyclesim PostgreSQL ×2"}, srvs: make([]*server, 2)}
	tests := []struct {
		name     string
		systems  []benchSystem
		want     []string
		wantNone []string
	}{
		{
			name:    "with moto",
			systems: []benchSystem{sqlite, &motoSystem{}},
			want: []string{"### lifecyclesim against moto_server", "× moto pairs each round", "| × moto median | × moto min |",
				"| act | 1 | lifecyclesim SQLite | 1,000 |", " 1.00× | 1.00× |", "Against the targets"},
		},
		{
			name:     "without moto",
			systems:  []benchSystem{sqlite, pg1, pg2},
			want:     []string{"### lifecyclesim's stores", "lifecyclesim PostgreSQL ×1 (1 process), lifecyclesim PostgreSQL ×2 (2 processes)"},
			wantNone: []string{"moto", "Against the targets"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results := map[cellKey]map[string][]loadResult{{"act", 1}: {}}
			for _, s := range tt.systems {
				results[cellKey{"act", 1}][s.Name()] = round
			}
			var b strings.Builder
			writeCompareReport(&b, cfg, fs, tt.systems, []string{"act"}, []int{1}, results)
			got := b.String()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("writeCompareReport() lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.wantNone {
				if strings.Contains(got, w) {
					t.Errorf("writeCompareReport() holds %q:\n%s", w, got)
				}
			}
			// Every row of the results table has as many cells as its header.
			i := strings.Index(got, "| operation | clients | system |")
			if i < 0 {
				t.Fatalf("writeCompareReport() has no results table:\n%s", got)
			}
			table, _, _ := strings.Cut(got[i:], "\n\n")
			rows := strings.Split(table, "\n")
			if len(rows) != 2+len(tt.systems) {
				t.Fatalf("results table:\n%s\nwant a header, a rule and %d rows", table, len(tt.systems))
			}
			for _, row := range rows[1:] {
				if strings.Count(row, "|") != strings.Count(rows[0], "|") {
					t.Errorf("row %q has not the header's %d cells", row, strings.Count(rows[0], "|")-1)
				}
			}
		})
	}
}
