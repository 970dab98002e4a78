package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// The bounds that keep one careless or hostile client from exhausting the simulator. Each
// refusal names the bound it hit. The HTTP layer adds its own (httpapi.MaxBodyBytes).
const (
	// MaxNameBytes bounds an object's name.
	MaxNameBytes = 256
	// MaxSpecBytes bounds an object's spec, encoded as JSON.
	MaxSpecBytes = 64 << 10
	// MaxKeyBytes bounds an Idempotency-Key.
	MaxKeyBytes = 256
	// MinTimeScale and MaxTimeScale bound the time scale.
	MinTimeScale = 1e-4
	MaxTimeScale = 1e4
	// MaxSlowFactor bounds a slow fault's factor.
	MaxSlowFactor = 1e6
	// MaxHealAfter bounds heal_after.
	MaxHealAfter = 30 * 24 * time.Hour
	// MaxClockAdvance bounds one clock advance, and MaxClockOffset the clock's total lead over
	// the wall clock, so the simulated time stays far inside what time.Time and the stores hold.
	MaxClockAdvance = 10 * 365 * 24 * time.Hour
	MaxClockOffset  = 100 * 365 * 24 * time.Hour
	// MaxFaultRules bounds the fault rules of one tenant.
	MaxFaultRules = 100
	// DefaultMaxObjects is the default per-tenant object quota.
	DefaultMaxObjects = 100_000
)

// maxDuration is the longest time.Duration.
const maxDuration = time.Duration(math.MaxInt64)

// mulDuration multiplies d by f, saturating instead of overflowing (f ≥ 0).
func mulDuration(d time.Duration, f float64) time.Duration {
	x := float64(d) * f
	if x >= float64(maxDuration) || math.IsNaN(x) {
		return maxDuration
	}
	return time.Duration(x)
}

// addTime adds d to t, saturating at the latest time the stores keep.
func addTime(t time.Time, d time.Duration) time.Time {
	if d > store.MaxDue.Sub(t) {
		return store.MaxDue
	}
	return t.Add(d)
}

// bodyHash is the hash an idempotency key is bound to: of the request as decoded, so
// whitespace and key order do not matter.
func bodyHash(req any) string {
	b, err := json.Marshal(req)
	if err != nil {
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// checkKey checks an idempotency key's length.
func checkKey(key string) error {
	if len(key) > MaxKeyBytes {
		return errorf(wire.CodeInvalid, "Idempotency-Key is %d bytes, over the limit of %d", len(key), MaxKeyBytes)
	}
	return nil
}

// keyReused answers a key sent again with another body.
func keyReused(key string) error {
	return errorf(wire.CodeKeyReused,
		"Idempotency-Key %q was used with another request body for this operation; use a new key for a new request", key)
}
