package reliability

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/sqlitestore"
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// The SQLite journal's layout, as changeLog writes it: a header block, then each small frame
// (one acknowledged change here, of frameSectors sectors) in a block of its own, in a journal
// of at least 1 MiB. Each sector of logSector bytes carries sectorData bytes of the frame.
const (
	logBlock      = 4096
	logSector     = 512
	sectorData    = logSector - 8
	frameHeadSize = 16
	frameSectors  = 4
)

// logImage is a SQLite file and its journal as a crash leaves them (kill -9 after every change
// was acknowledged, none folded into the tables).
type logImage struct {
	db, wal, log []byte
	changes      int
}

// crashImage commits changes creates (each acknowledged, each a frame) to a store that does
// not fold its journal in, and copies its files while it is open: the state kill -9 leaves.
func crashImage(t *testing.T, changes int) logImage {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sim.db")
	s, err := sqlitestore.OpenWith(t.Context(), path, sqlitestore.Options{CheckpointAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 1; i <= changes; i++ {
		m := storetest.NewObject(fmt.Sprintf("m%d", i), "acme", "machine")
		m.Spec["note"] = strings.Repeat("n", (frameSectors-1)*sectorData) // a frame of frameSectors sectors
		storetest.MustCreate(t, s, m, storetest.NewEvent(m, "DEPLOYING"))
	}
	var img logImage
	img.changes = changes
	for _, f := range []struct {
		to     *[]byte
		suffix string
	}{{&img.db, ""}, {&img.wal, "-wal"}, {&img.log, "-log"}} {
		b, err := os.ReadFile(path + f.suffix)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		*f.to = b
	}
	// The layout the damage below aims at: frames of frameSectors sectors in blocks
	// 1..changes, nothing after.
	for i := 1; i <= changes+1; i++ {
		for j := 0; j < logBlock/logSector; j++ {
			off := i*logBlock + j*logSector
			sec := img.log[off : off+logSector]
			empty := bytes.Count(sec[:sectorData], []byte{0}) == sectorData
			if want := i == changes+1 || j >= frameSectors; empty != want {
				t.Fatalf("the journal's block %d, sector %d is empty: %v; want frames of %d sectors in blocks 1 to %d", i, j, empty, frameSectors, changes)
			}
		}
	}
	return img
}

// restore writes the image to dir and gives the database's path; log nil leaves the journal out.
func (img logImage) restore(t *testing.T, log []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sim.db")
	for _, f := range []struct {
		b      []byte
		suffix string
	}{{img.db, ""}, {img.wal, "-wal"}, {log, "-log"}} {
		if f.b == nil {
			continue
		}
		if err := os.WriteFile(path+f.suffix, f.b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// kept counts the image's creates a store holds.
func kept(t *testing.T, s store.Store, changes int) int {
	t.Helper()
	n := 0
	for i := 1; i <= changes; i++ {
		if _, err := s.Get(t.Context(), "acme", fmt.Sprintf("m%d", i)); err == nil {
			n++
		} else if !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
	}
	return n
}

// TestLogDamage: each kind of damage to the SQLite journal of issue 43 gets its answer: a
// refusal naming the journal and the ways out (restoring it, which keeps every change, or
// --accept-log-loss, which keeps the frames before the damage), or a start that replays it.
// lost counts acknowledged changes missing after a start without refusal. A torn last write
// (sectors of the last frame never written, as a power loss during the write leaves them)
// was never acknowledged: those rows count the changes before it.
func TestLogDamage(t *testing.T) {
	const changes = 6
	img := crashImage(t, changes)
	flip := func(off int) func([]byte) []byte {
		return func(b []byte) []byte { b[off] ^= 0x5a; return b }
	}
	frame := func(i int) int { return i * logBlock }
	never := func(from, to int) func([]byte) []byte { // sectors of the last frame never written
		return func(b []byte) []byte {
			clear(b[frame(changes)+from*logSector : frame(changes)+to*logSector])
			return b
		}
	}
	cases := []struct {
		name   string
		damage func([]byte) []byte // nil result: the journal is deleted
		// torn: the last write was cut short by a crash, so never acknowledged.
		torn bool
	}{
		{"header magic", flip(0), false},
		{"header salt", flip(9), false},
		{"first frame's data", flip(frame(1) + frameHeadSize + 5), false},
		{"middle frame's data", flip(frame(3) + frameHeadSize + 5), false},
		{"last frame's data", flip(frame(changes) + frameHeadSize + 5), false},
		{"last frame's last sector", flip(frame(changes) + (frameSectors-1)*logSector + 5), false},
		{"a length field", flip(frame(2) + 2), false},
		{"zeroed", func(b []byte) []byte { return make([]byte, len(b)) }, false},
		{"deleted", func([]byte) []byte { return nil }, false},
		{"garbage", func(b []byte) []byte { _, _ = rand.Read(b); return b }, false},
		{"re-headed", func(b []byte) []byte {
			_, _ = rand.Read(b[8:16])
			binary.LittleEndian.PutUint32(b[16:], crc32c(b[:16]))
			return b
		}, false},
		{"cut mid-frame", func(b []byte) []byte { return b[:frame(4)+frameHeadSize+3] }, false},
		{"cut at the header", func(b []byte) []byte { return b[:20] }, false},
		{"torn write: last sectors unwritten", never(2, frameSectors), true},
		{"torn write: first sector unwritten", never(0, 1), true},
	}
	for _, c := range cases {
		log := c.damage(bytes.Clone(img.log))
		path := img.restore(t, log)
		acked := changes
		if c.torn {
			acked--
		}
		r := row{name: "SQLite log damage: " + c.name, tried: acked}
		s, err := sqlitestore.Open(t.Context(), path)
		var damage *sqlitestore.LogDamageError
		switch {
		case err == nil:
			n := kept(t, s, acked)
			_ = s.Close()
			r.lost = acked - n
			r.note = fmt.Sprintf("starts, replays: %d of %d acknowledged kept", n, acked)
			if c.torn {
				r.note += " (the torn write was never acknowledged)"
			}
		case errors.As(err, &damage):
			if !strings.Contains(err.Error(), path+"-log") || !strings.Contains(err.Error(), "--accept-log-loss") {
				r.violations++
				t.Errorf("%s: the refusal %q does not name the journal and --accept-log-loss", c.name, err)
			}
			// The ways out the message names.
			accepted, aerr := sqlitestore.OpenWith(t.Context(), img.restore(t, log), sqlitestore.Options{AcceptLogLoss: true})
			if aerr != nil {
				r.violations++
				t.Errorf("%s: --accept-log-loss: %v", c.name, aerr)
				break
			}
			na := kept(t, accepted, changes)
			_ = accepted.Close()
			restored, rerr := sqlitestore.Open(t.Context(), img.restore(t, img.log))
			if rerr != nil {
				r.violations++
				t.Errorf("%s: restored journal: %v", c.name, rerr)
				break
			}
			nr := kept(t, restored, changes)
			_ = restored.Close()
			if nr != changes {
				r.violations++
			}
			r.note = fmt.Sprintf("refused; --accept-log-loss keeps %d, the restored journal %d of %d", na, nr, changes)
		default:
			t.Fatalf("%s: open = %v", c.name, err)
		}
		record(r)
		if c.torn && err != nil {
			t.Errorf("%s: a torn write refused: %v", c.name, err)
		}
		if r.lost != 0 || r.violations > 0 {
			t.Errorf("%s: lost %d, violations %d (%s)", c.name, r.lost, r.violations, r.note)
		}
	}
}

// crc32c is the journal header's checksum.
func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }
