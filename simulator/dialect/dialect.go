// Package dialect holds what the seed systems' native APIs (the dialects: Blazar, Keystone,
// later Sahara and CB-Tumblebug) share: the UUIDs they show for the simulator's objects, the
// caller's tenant as the HTTP layer resolved it, and JSON answers.
//
// A dialect is a plain net/http handler over the engine: it imports the engine, the wire
// contract and package lifecycle, never echo, Prometheus or a store (TestLayers keeps it so).
// The HTTP layer (httpapi) mounts each under its own prefix (/blazar/v1, /identity,
// /tumblebug), with the same request limits, request IDs, logs and metrics as /v1; tenancy
// comes from the caller's token (X-Auth-Token; CB-Tumblebug's Basic auth password) through a
// Tenants the HTTP layer gives, fault rules, the clock and idempotency
// keys from the engine. One object is the same object through /v1, the dashboard and a
// dialect: a dialect stores nothing of its own.
package dialect

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
)

// Tenants resolves the token a client sends (an OpenStack client's X-Auth-Token, the password
// of a CB-Tumblebug client's Basic auth) to its tenant. The HTTP
// layer implements it over its bearer tokens, so a token works the same at /v1 and in a
// dialect. An error is a *wire.Error (unauthorized, forbidden) the dialect answers in its
// own format.
type Tenants interface {
	TenantOf(token string) (string, error)
}

// UUID is the UUID a dialect shows for the object with the simulator ID id (kind-16 hex
// digits): an RFC 9562 version 8 UUID holding the ID's 64-bit number and, in its last 7
// bytes, a hash of the kind. It is a function of the ID alone, so it is stored wherever the
// ID is (it survives restarts, replicas share it, an export carries it) and IDOf maps it back
// without an index. ok is false for an ID not of that form.
func UUID(id string) (uuid string, ok bool) {
	kind, n, ok := splitID(id)
	if !ok {
		return "", false
	}
	var b [16]byte
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16)
	b[6] = 0x80 | byte(n>>12)&0x0f // version 8
	b[7] = byte(n >> 4)
	b[8] = 0x80 | byte(n)&0x0f // variant 10
	h := kindHash(kind)
	copy(b[9:], h[:7])
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:]), true
}

// IDOf is the simulator ID of the object of kind whose UUID is uuid; ok is false when uuid is
// not a UUID the dialects made for an object of that kind (another kind's, say).
func IDOf(kind, uuid string) (id string, ok bool) {
	if len(uuid) != 36 || uuid[8] != '-' || uuid[13] != '-' || uuid[18] != '-' || uuid[23] != '-' {
		return "", false
	}
	var b [16]byte
	hexed := uuid[0:8] + uuid[9:13] + uuid[14:18] + uuid[19:23] + uuid[24:]
	if _, err := hex.Decode(b[:], []byte(strings.ToLower(hexed))); err != nil {
		return "", false
	}
	h := kindHash(kind)
	if b[6]>>4 != 8 || b[8]>>6 != 2 || b[8]&0x30 != 0 || string(b[9:]) != string(h[:7]) {
		return "", false
	}
	n := uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 | uint64(b[4])<<24 | uint64(b[5])<<16 |
		uint64(b[6]&0x0f)<<12 | uint64(b[7])<<4 | uint64(b[8]&0x0f)
	var nb [8]byte
	binary.BigEndian.PutUint64(nb[:], n)
	return kind + "-" + hex.EncodeToString(nb[:]), true
}

// IsUUID reports whether s has a UUID's form (8-4-4-4-12 hex digits): OpenStack clients take
// anything else for a name.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
}

// splitID splits an engine ID (kind-16 hex digits) into its kind and number.
func splitID(id string) (kind string, n uint64, ok bool) {
	i := strings.LastIndexByte(id, '-')
	if i < 1 || len(id)-i-1 != 16 {
		return "", 0, false
	}
	var b [8]byte
	if _, err := hex.Decode(b[:], []byte(id[i+1:])); err != nil || strings.ToLower(id[i+1:]) != id[i+1:] {
		return "", 0, false
	}
	return id[:i], binary.BigEndian.Uint64(b[:]), true
}

// kindHashes holds each kind's hash once computed: every UUID a dialect answers or reads
// needs its kind's, and a SHA-256 per ID cost more than the rest of the mapping.
var kindHashes sync.Map // kind → [32]byte

func kindHash(kind string) [32]byte {
	if v, ok := kindHashes.Load(kind); ok {
		if h, ok := v.([32]byte); ok {
			return h
		}
	}
	h := sha256.Sum256([]byte("lifecyclesim-dialect-uuid\x00" + kind))
	kindHashes.Store(kind, h)
	return h
}

// JSON answers v as JSON with status.
func JSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the status is sent: a client gone is only logged by the server
}
