package main

import (
	"math"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name string
		give []time.Duration
		p    float64
		want time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one sample p50", ms(7), 50, 7 * time.Millisecond},
		{"one sample p99", ms(7), 99, 7 * time.Millisecond},
		{"p50 of four is the second", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p99 of four is the last", ms(1, 2, 3, 4), 99, 4 * time.Millisecond},
		{"p50 of 1..100", ms(hundred...), 50, 50 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 99, 99 * time.Millisecond},
		{"p100 of 1..100", ms(hundred...), 100, 100 * time.Millisecond},
		{"tiny p is the first", ms(hundred...), 0.001, time.Millisecond},
	}
	for _, tt := range tests {
		if got := percentile(tt.give, tt.p); got != tt.want {
			t.Errorf("%s: percentile(%v, %v) = %v, want %v", tt.name, tt.give, tt.p, got, tt.want)
		}
	}
}

func TestMedianMinimum(t *testing.T) {
	tests := []struct {
		name             string
		give             []float64
		wantMed, wantMin float64
	}{
		{"odd", []float64{3, 1, 2}, 2, 1},
		{"even", []float64{4, 1, 3, 2}, 2.5, 1},
		{"one", []float64{5}, 5, 5},
	}
	for _, tt := range tests {
		if got := median(tt.give); got != tt.wantMed {
			t.Errorf("%s: median(%v) = %v, want %v", tt.name, tt.give, got, tt.wantMed)
		}
		if got := minimum(tt.give); got != tt.wantMin {
			t.Errorf("%s: minimum(%v) = %v, want %v", tt.name, tt.give, got, tt.wantMin)
		}
	}
	if got := median(nil); !math.IsNaN(got) {
		t.Errorf("median(nil) = %v, want NaN", got)
	}
	// median must not reorder its argument: rounds stay paired with the other system's.
	xs := []float64{3, 1, 2}
	median(xs)
	if xs[0] != 3 || xs[1] != 1 || xs[2] != 2 {
		t.Errorf("median reordered its input: %v", xs)
	}
}

func TestRatios(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		want []float64
	}{
		{"paired by round", []float64{100, 200, 300}, []float64{10, 20, 50}, []float64{10, 10, 6}},
		{"a zero divisor is skipped", []float64{100, 200}, []float64{0, 20}, []float64{10}},
		{"unequal lengths pair the common rounds", []float64{100, 200, 300}, []float64{10}, []float64{10}},
		{"NaN is skipped", []float64{math.NaN(), 8}, []float64{1, 2}, []float64{4}},
	}
	for _, tt := range tests {
		got := ratios(tt.a, tt.b)
		if len(got) != len(tt.want) {
			t.Fatalf("%s: ratios(%v, %v) = %v, want %v", tt.name, tt.a, tt.b, got, tt.want)
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s: ratios(%v, %v) = %v, want %v", tt.name, tt.a, tt.b, got, tt.want)
			}
		}
	}
}

func TestCostRatio(t *testing.T) {
	tests := []struct {
		name         string
		small, large float64
		rate         bool
		want         float64
	}{
		{"cost doubled", 10, 20, false, 2},
		{"rate halved is twice the cost", 1000, 500, true, 2},
		{"rate doubled is half the cost", 500, 1000, true, 0.5},
	}
	for _, tt := range tests {
		if got := costRatio(tt.small, tt.large, tt.rate); got != tt.want {
			t.Errorf("%s: costRatio(%v, %v, %v) = %v, want %v", tt.name, tt.small, tt.large, tt.rate, got, tt.want)
		}
	}
	if got := costRatio(0, 5, false); !math.IsNaN(got) {
		t.Errorf("costRatio(0, 5, false) = %v, want NaN", got)
	}
}

func TestCPUBetween(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		a, b cpuSample
		want time.Duration
	}{
		{"threads all live: their ns counts", cpuSample{ticks: 10 * ms, threads: map[int]time.Duration{1: 5 * ms, 2: 3 * ms}},
			cpuSample{ticks: 20 * ms, threads: map[int]time.Duration{1: 7 * ms, 2: 4 * ms}}, 3 * ms},
		{"a thread born in between counts whole", cpuSample{ticks: 10 * ms, threads: map[int]time.Duration{1: 5 * ms}},
			cpuSample{ticks: 20 * ms, threads: map[int]time.Duration{1: 6 * ms, 3: 2 * ms}}, 3 * ms},
		{"a thread ended: the ticks", cpuSample{ticks: 10 * ms, threads: map[int]time.Duration{1: 5 * ms, 2: 3 * ms}},
			cpuSample{ticks: 30 * ms, threads: map[int]time.Duration{1: 9 * ms}}, 20 * ms},
		{"no threads read: the ticks", cpuSample{ticks: 10 * ms}, cpuSample{ticks: 40 * ms}, 30 * ms},
		{"threads born and ended in between: the ticks say more", cpuSample{ticks: 10 * ms, threads: map[int]time.Duration{1: 5 * ms}},
			cpuSample{ticks: 210 * ms, threads: map[int]time.Duration{1: 8 * ms}}, 200 * ms},
	}
	for _, tt := range tests {
		if got := cpuBetween(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: cpuBetween = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestParseCounts(t *testing.T) {
	tests := []struct {
		give            string
		wantReq, wantTr int
		wantErr         bool
	}{
		{give: "requests=412 transitions=203\n", wantReq: 412, wantTr: 203},
		{give: "transitions=1 requests=2", wantReq: 2, wantTr: 1},
		{give: "requests=5", wantErr: true},
		{give: "requests=x transitions=1", wantErr: true},
	}
	for _, tt := range tests {
		req, tr, err := parseCounts(tt.give)
		if (err != nil) != tt.wantErr || req != tt.wantReq || tr != tt.wantTr {
			t.Errorf("parseCounts(%q) = %d, %d, %v; want %d, %d, error %v", tt.give, req, tr, err, tt.wantReq, tt.wantTr, tt.wantErr)
		}
	}
}

func TestMedianRound(t *testing.T) {
	run := func(ok, busy int) loadResult { return loadResult{OK: ok, Busy: busy, Elapsed: time.Second} }
	tests := []struct {
		name     string
		give     []loadResult
		wantOK   int
		wantBusy int
	}{
		{"one", []loadResult{run(5, 1)}, 5, 1},
		{"three: the middle rate, busy summed", []loadResult{run(900, 1), run(100, 2), run(500, 3)}, 500, 6},
		{"two: the lower", []loadResult{run(900, 0), run(100, 0)}, 100, 0},
	}
	for _, tt := range tests {
		got := medianRound(tt.give)
		if got.OK != tt.wantOK || got.Busy != tt.wantBusy {
			t.Errorf("%s: medianRound = OK %d busy %d, want OK %d busy %d", tt.name, got.OK, got.Busy, tt.wantOK, tt.wantBusy)
		}
	}
}

// TestScaleRatioPairsRounds: an operation's ratio is the median of the ratios within each
// round. The machine slows down (costs double) for the large size from round 2 and for the
// small one only in round 3: the rounds read 1.1, 2.2 and 1.1, so the ratio is 1.1, where the
// medians of each size's own rounds (100 and 220) would read 2.2.
func TestScaleRatioPairsRounds(t *testing.T) {
	round := func(cpuMicros int64) loadResult {
		return loadResult{OK: 1000, Elapsed: time.Second, ServerCPU: time.Duration(cpuMicros*1000) * time.Microsecond}
	}
	small := sizeResult{rounds: map[string][2][]loadResult{"act": {nil, {round(100), round(100), round(200)}}}}
	large := sizeResult{rounds: map[string][2][]loadResult{"act": {nil, {round(110), round(220), round(220)}}}}
	row := scaleRow{op: "act", pass: 1, of: loadResult.CPUPerOK}
	if got := row.ratio(small, large); math.Abs(got-1.1) > 1e-9 {
		t.Errorf("paired ratio = %v, want 1.1 (not the unpaired 2.2)", got)
	}
	// Rates invert: the small size's rate over the large's.
	rate := scaleRow{op: "act", pass: 1, of: loadResult.Rate, isRate: true}
	slow := sizeResult{rounds: map[string][2][]loadResult{"act": {nil, {{OK: 900, Elapsed: time.Second}}}}}
	fast := sizeResult{rounds: map[string][2][]loadResult{"act": {nil, {{OK: 1000, Elapsed: time.Second}}}}}
	if got := rate.ratio(fast, slow); math.Abs(got-1000.0/900) > 1e-9 {
		t.Errorf("rate ratio = %v, want %v", got, 1000.0/900)
	}
}
