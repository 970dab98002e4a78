package sqlitestore

import (
	"bytes"
	"crypto/rand"
	"database/sql"
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
	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// logDamageChanges is how many changes (creates of m1, m2, ...) a crashed log holds, one frame
// each.
const logDamageChanges = 6

// crashedWithLog makes a database as a crash leaves it: logDamageChanges acknowledged creates,
// each in a frame of the log (of frameSectors sectors, in a block of its own), none
// checkpointed. It gives the copy's path and its log's bytes.
func crashedWithLog(t *testing.T) (path string, log []byte) {
	t.Helper()
	s := openSQLiteWait(t, filepath.Join(t.TempDir(), "lifecyclesim.db"), time.Hour) // no checkpoint
	for i := 1; i <= logDamageChanges; i++ {
		m := storetest.NewObject(fmt.Sprintf("m%d", i), "acme", "machine")
		m.Spec["note"] = strings.Repeat("n", 3*sectorData) // a frame of several sectors
		storetest.MustCreate(t, s, m, storetest.NewEvent(m, "DEPLOYING"))
	}
	path = filepath.Join(t.TempDir(), "crashed.db")
	copyDB(t, s, path)
	log, err := os.ReadFile(path + logSuffix)
	if err != nil {
		t.Fatal(err)
	}
	frames := readFrames(log)
	if len(frames) != logDamageChanges {
		t.Fatalf("the crashed log holds %d frames, want %d", len(frames), logDamageChanges)
	}
	for _, f := range frames {
		if n := (frameHeadSize + len(f.data) + sectorData - 1) / sectorData; n != frameSectors {
			t.Fatalf("frame %d takes %d sectors, want %d", f.row, n, frameSectors)
		}
	}
	return path, log
}

// frameSectors is how many sectors each frame of crashedWithLog takes.
const frameSectors = 4

// objectsKept counts the creates of crashedWithLog that s holds (m1, m2, ... in order).
func objectsKept(t *testing.T, s *Store) int {
	t.Helper()
	n := 0
	for i := 1; i <= logDamageChanges; i++ {
		_, err := s.Get(t.Context(), "acme", fmt.Sprintf("m%d", i))
		switch {
		case err == nil:
			n++
		case !errors.Is(err, store.ErrNotFound):
			t.Fatal(err)
		}
	}
	return n
}

// frameOff is where the crashed log's frame i (from 1) starts: each takes a block.
func frameOff(i int) int { return i * logBlock }

// lastFrame is where the crashed log's last frame starts.
var lastFrame = frameOff(logDamageChanges)

// logSeed is the seed of the log b's header.
func logSeed(b []byte) uint32 { return crc32.Checksum(b[8:16], castagnoli) }

// tear leaves sectors from to to (excluding) of the crashed log's last frame as a write a
// crash cut short leaves them: as they were before it, zeros (stale false) or the sectors an
// earlier log (another salt) wrote there (stale true).
func tear(from, to int, stale bool) func(*testing.T, []byte, string) {
	return func(t *testing.T, log []byte, path string) {
		b := bytes.Clone(log)
		for i := from; i < to; i++ {
			off := lastFrame + i*logSector
			sec := b[off : off+logSector]
			if stale {
				sealSector(sec, logSeed(log)^0x9e3779b9, off)
			} else {
				clear(sec)
			}
		}
		writeLog(t, path, b)
	}
}

// LogDamageCase is one damage done to a crashed log and the answer decided for it.
type logDamageCase struct {
	name   string
	damage func(t *testing.T, log []byte, path string) // path is the log's file
	// refused: the open fails with a *LogDamageError naming the file; then kept is what an
	// open with AcceptLogLoss keeps. Otherwise the open replays silently and keeps kept.
	refused bool
	kept    int
}

// writeLog writes b as the log at path.
func writeLog(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// flip changes a byte of the log at off.
func flip(off int) func(*testing.T, []byte, string) {
	return func(t *testing.T, log []byte, path string) {
		b := bytes.Clone(log)
		b[off] ^= 0x5a
		writeLog(t, path, b)
	}
}

// cut cuts the log to n bytes.
func cut(n int) func(*testing.T, []byte, string) {
	return func(t *testing.T, log []byte, path string) { writeLog(t, path, log[:n]) }
}

// logDamageCases are the damage kinds of issue 43 and their answers.
var logDamageCases = []logDamageCase{
	{name: "intact", damage: func(*testing.T, []byte, string) {}, kept: logDamageChanges},
	// The header is looked past: the frames check out against the salt the database recorded.
	{name: "header magic", damage: flip(0), kept: logDamageChanges},
	{name: "header salt", damage: flip(9), kept: logDamageChanges},
	{name: "header checksum", damage: flip(17), kept: logDamageChanges},
	// A bad frame followed by frames of the same log: acknowledged changes are in it.
	{name: "first frame's data", damage: flip(frameOff(1) + frameHeadSize + 5), refused: true, kept: 0},
	{name: "middle frame's data", damage: flip(frameOff(3) + frameHeadSize + 5), refused: true, kept: 2},
	{name: "a length field", damage: flip(frameOff(2) + 2), refused: true, kept: 1},
	{name: "a frame's row", damage: func(t *testing.T, log []byte, path string) {
		// A frame that checks out but holds the wrong row (rewritten whole): rows must follow.
		b := bytes.Clone(log)
		sec := b[frameOff(2) : frameOff(2)+logSector]
		binary.LittleEndian.PutUint64(sec[8:], 99)
		sealSector(sec, logSeed(log), frameOff(2))
		writeLog(t, path, b)
	}, refused: true, kept: 1},
	// The last frame damaged: one of its sectors was written whole (a disk writes a sector
	// whole or not at all) and does not check out, so the frame was written and synced, and
	// its change acknowledged.
	{name: "last frame's data", damage: flip(lastFrame + frameHeadSize + 5), refused: true, kept: logDamageChanges - 1},
	{name: "last frame's length field", damage: flip(lastFrame + 1), refused: true, kept: logDamageChanges - 1},
	{name: "last frame's last sector", damage: flip(lastFrame + (frameSectors-1)*logSector + 7), refused: true, kept: logDamageChanges - 1},
	{name: "last frame's sector tag", damage: flip(lastFrame + logSector + sectorData + 1), refused: true, kept: logDamageChanges - 1},
	// A write a crash cut short (never answered): each sector of the last frame is written or
	// as it was. Replayed up to it, silently.
	{name: "torn: last frame's last sectors never written (zeros)", damage: tear(2, frameSectors, false), kept: logDamageChanges - 1},
	{name: "torn: last frame's last sectors as an earlier log left them", damage: tear(1, frameSectors, true), kept: logDamageChanges - 1},
	{name: "torn: last frame's first sector never written", damage: tear(0, 1, false), kept: logDamageChanges - 1},
	{name: "torn: last frame's first sectors as an earlier log left them", damage: tear(0, 2, true), kept: logDamageChanges - 1},
	{name: "torn: nothing of the last frame written", damage: tear(0, frameSectors, false), kept: logDamageChanges - 1},
	// What cannot be told from a torn write: a sector zeroed whole (documented).
	{name: "last frame's sector zeroed whole", damage: tear(1, 2, false), kept: logDamageChanges - 1},
	{name: "zeroed", damage: func(t *testing.T, log []byte, path string) { writeLog(t, path, make([]byte, len(log))) }, refused: true},
	{name: "deleted", damage: func(t *testing.T, _ []byte, path string) {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}, refused: true},
	{name: "garbage", damage: func(t *testing.T, log []byte, path string) {
		b := make([]byte, len(log))
		_, _ = rand.Read(b)
		writeLog(t, path, b)
	}, refused: true},
	{name: "re-headed (started over by another writer)", damage: func(t *testing.T, log []byte, path string) {
		b := bytes.Clone(log)
		_, _ = rand.Read(b[8:16])
		binary.LittleEndian.PutUint32(b[16:], crc32.Checksum(b[:16], castagnoli))
		writeLog(t, path, b)
	}, refused: true},
	// A crash never shortens the log (it is written in place within the size the database
	// recorded): a shorter one was cut.
	{name: "cut mid-frame", damage: cut(frameOff(4) + frameHeadSize + 3), refused: true, kept: 3},
	{name: "cut at a frame's boundary", damage: cut(frameOff(4)), refused: true, kept: 3},
	{name: "cut at the header", damage: cut(logHeaderSize), refused: true},
	{name: "cut inside the header", damage: cut(10), refused: true},
}

// Every damage kind gets its decided answer: a refusal that names the file, the damage and
// the ways out (both shown to work: restoring the log, and AcceptLogLoss, which keeps the
// frames before the damage and says what it dropped), or a silent replay.
func TestSQLiteLogDamage(t *testing.T) {
	crashed, log := crashedWithLog(t)
	for _, c := range logDamageCases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "crashed.db")
			copyFile(t, crashed, path)
			writeLog(t, path+logSuffix, log)
			c.damage(t, log, path+logSuffix)
			s, err := openStore(t.Context(), path, time.Hour)
			if !c.refused {
				if err != nil {
					t.Fatalf("open = %v, want a replay", err)
				}
				defer s.Close()
				if got := objectsKept(t, s); got != c.kept {
					t.Errorf("kept %d of %d changes, want %d", got, logDamageChanges, c.kept)
				}
				return
			}
			var damage *LogDamageError
			if !errors.As(err, &damage) {
				t.Fatalf("open = %v, want a *LogDamageError", err)
			}
			for _, want := range []string{path + logSuffix, "restore", "--accept-log-loss"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal %q does not say %q", err, want)
				}
			}
			// The file is as it was: the refusal changed nothing.
			if c.name != "deleted" {
				if _, err := os.Stat(path + logSuffix); err != nil {
					t.Errorf("the log after the refusal: %v", err)
				}
			}

			// Accepting the loss opens what the frames before the damage hold, and says so.
			accepted := filepath.Join(t.TempDir(), "accepted.db")
			copyFile(t, path, accepted)
			if b, err := os.ReadFile(path + logSuffix); err == nil {
				writeLog(t, accepted+logSuffix, b)
			}
			s, err = openStoreWith(t.Context(), accepted, Options{AcceptLogLoss: true, CheckpointAfter: time.Hour})
			if err != nil {
				t.Fatalf("open with AcceptLogLoss = %v", err)
			}
			if got := objectsKept(t, s); got != c.kept {
				t.Errorf("AcceptLogLoss kept %d of %d changes, want %d", got, logDamageChanges, c.kept)
			}
			if !strings.Contains(s.LogLoss(), accepted+logSuffix) {
				t.Errorf("LogLoss = %q, want what was dropped from %s", s.LogLoss(), accepted+logSuffix)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			// And then it is an ordinary file again.
			s = openSQLiteT(t, accepted)
			if got := objectsKept(t, s); got != c.kept || s.LogLoss() != "" {
				t.Errorf("reopened after accepting the loss: kept %d, LogLoss %q; want %d, none", got, s.LogLoss(), c.kept)
			}

			// Restoring the log from a copy opens with every change.
			writeLog(t, path+logSuffix, log)
			s = openSQLiteWait(t, path, time.Hour)
			if got := objectsKept(t, s); got != logDamageChanges {
				t.Errorf("after restoring the log: kept %d of %d", got, logDamageChanges)
			}
		})
	}
}

// copyFile copies the file at from to to.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeLog(t, to, b)
}

// A crash after a checkpoint committed and before the log's new header was written leaves the
// old header and frames the checkpoint applied: the open accepts it (the database recorded
// that salt as the one before), applies none of them again, and loses nothing.
func TestSQLiteLogCrashBeforeNewHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lifecyclesim.db")
	s := openSQLiteWait(t, path, time.Hour)
	for i := 1; i <= 3; i++ {
		m := storetest.NewObject(fmt.Sprintf("m%d", i), "acme", "machine")
		storetest.MustCreate(t, s, m, storetest.NewEvent(m, "DEPLOYING"))
	}
	old, err := os.ReadFile(s.log.f.Name())
	if err != nil {
		t.Fatal(err)
	}
	// Close checkpoints (recording the next salt, and this one as the one before) and starts
	// the log over; the crash is made by putting the old log back and the record as it was
	// before Close marked it closed.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := openRaw(t, path)
	if _, err := db.ExecContext(t.Context(), "UPDATE meta SET value = replace(value, ' closed', ' open') WHERE key = ?", logRecordKey); err != nil {
		t.Fatal(err)
	}
	db.Close()
	crashed := filepath.Join(t.TempDir(), "crashed.db")
	copyFile(t, path, crashed)
	writeLog(t, crashed+logSuffix, old) // the header the checkpoint did not get to replace
	c := openSQLiteT(t, crashed)
	if got := objectsKept(t, c); got != 3 {
		t.Errorf("kept %d of 3", got)
	}
	// A log of any other salt is refused.
	other := bytes.Clone(old)
	_, _ = rand.Read(other[8:16])
	binary.LittleEndian.PutUint32(other[16:], crc32.Checksum(other[:16], castagnoli))
	crashed2 := filepath.Join(t.TempDir(), "crashed2.db")
	copyFile(t, path, crashed2)
	writeLog(t, crashed2+logSuffix, other)
	if _, err := openStore(t.Context(), crashed2, time.Hour); !errors.As(err, new(*LogDamageError)) {
		t.Errorf("open with another salt's header = %v, want a *LogDamageError", err)
	}
}

// A database of version 8 records nothing of its log: its log is read as before (frames up to
// the first that does not check out), and the open starts recording.
func TestSQLiteLogRecordStartsOnUpgrade(t *testing.T) {
	path, _ := crashedWithLog(t)
	db := openRaw(t, path)
	if _, err := db.ExecContext(t.Context(), "DELETE FROM meta WHERE key = ?; PRAGMA user_version = 8", logRecordKey); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := openSQLiteWait(t, path, time.Hour)
	if got := objectsKept(t, s); got != logDamageChanges {
		t.Errorf("kept %d of %d", got, logDamageChanges)
	}
	if _, ok, err := s.readLogRecord(t.Context()); !ok || err != nil {
		t.Errorf("the log's record after the upgrade: %v, %v; want one", ok, err)
	}
}

// Through a symlink, the log is the one beside the file itself: a crash's frames are
// replayed whichever name opens it.
func TestSQLiteLogBesideTheFileItself(t *testing.T) {
	path, _ := crashedWithLog(t)
	link := filepath.Join(t.TempDir(), "link.db")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	s := openSQLiteWait(t, link, time.Hour)
	if got := objectsKept(t, s); got != logDamageChanges {
		t.Errorf("opened through a symlink: kept %d of %d", got, logDamageChanges)
	}
	if _, err := os.Stat(link + logSuffix); err == nil {
		t.Errorf("the open made a log beside the symlink's name")
	}
}

// openRaw opens the database at path with database/sql alone (no store), closed when the
// test ends.
func openRaw(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Frames past the size the database recorded grew the journal, so a crash during such a
// write can leave it shorter: a cut there is a torn tail (the frames before it replay), and a
// cut at a frame's boundary there cannot be told from a shorter journal at all (documented).
func TestSQLiteLogCutPastRecordedSize(t *testing.T) {
	s := openSQLiteWait(t, filepath.Join(t.TempDir(), "lifecyclesim.db"), time.Hour)
	for i := 1; i <= 3; i++ {
		m := storetest.NewObject(fmt.Sprintf("m%d", i), "acme", "machine")
		if i == 2 { // a frame that goes past the new journal's logMinSize
			m.Spec["blob"] = strings.Repeat("x", logMinSize)
		}
		storetest.MustCreate(t, s, m, storetest.NewEvent(m, "DEPLOYING"))
	}
	path := filepath.Join(t.TempDir(), "crashed.db")
	copyDB(t, s, path)
	log, err := os.ReadFile(path + logSuffix)
	if err != nil {
		t.Fatal(err)
	}
	frames := readFrames(log)
	if len(frames) != 3 {
		t.Fatalf("frames = %d, want 3", len(frames))
	}
	third := len(log) - logBlock // the last frame takes the journal's last block
	if third < logMinSize {
		t.Fatalf("the third frame starts at %d, within the recorded %d", third, logMinSize)
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"cut mid-frame", third + frameHeadSize + 3}, {"cut at the frame's boundary", third}} {
		t.Run(c.name, func(t *testing.T) {
			crashed := filepath.Join(t.TempDir(), "crashed.db")
			copyFile(t, path, crashed)
			writeLog(t, crashed+logSuffix, log[:c.n])
			s := openSQLiteWait(t, crashed, time.Hour)
			if got := objectsKept(t, s); got != 2 {
				t.Errorf("kept %d, want the first 2 (the cut frame is lost)", got)
			}
		})
	}
}
