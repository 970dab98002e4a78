package main

import (
	"math"
	"slices"
	"time"
)

// percentile is the nearest-rank percentile (0 < p ≤ 100) of sorted latencies: the smallest
// value at least p% of the samples are at or below. Zero for no samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// median of xs (the mean of the middle two for an even count); NaN for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// minimum of xs; NaN for none.
func minimum(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return slices.Min(xs)
}

// ratios pairs a[i] with b[i] (the same round, run back to back) and returns a[i]/b[i],
// skipping pairs where either side is missing or b[i] is not positive.
func ratios(a, b []float64) []float64 {
	var out []float64
	for i := range min(len(a), len(b)) {
		if b[i] > 0 && !math.IsNaN(a[i]) {
			out = append(out, a[i]/b[i])
		}
	}
	return out
}

// costRatio is how much a cost grew from small to large: large/small for a cost (µs, bytes),
// small/large for a rate (req/s), so above 1 always means worse at the larger size.
func costRatio(small, large float64, isRate bool) float64 {
	if isRate {
		small, large = large, small
	}
	if small <= 0 || math.IsNaN(small) || math.IsNaN(large) {
		return math.NaN()
	}
	return large / small
}
