package sqlitestore

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store/storetest"
)

// appendFrame appends a frame of data to l.
func appendFrame(t *testing.T, l *changeLog, row uint64, data string) {
	t.Helper()
	if err := l.append(row, append(make([]byte, frameHeadSize), data...)); err != nil {
		t.Fatal(err)
	}
}

// frameRows lists the rows and data of the frames the log at path reads back.
func frameRows(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range readFrames(b) {
		out = append(out, string(f.data))
	}
	return out
}

// The log reads back its frames up to the first one a crash cut short, and none of what it
// held before it started over, though its bytes are still in the file.
func TestChangeLogReadsWhatItWrote(t *testing.T) {
	db := filepath.Join(t.TempDir(), "lifecyclesim.db")
	l, frames, err := openChangeLog(db)
	if err != nil || len(frames) != 0 {
		t.Fatalf("openChangeLog(new) = %d frames, %v; want none", len(frames), err)
	}
	defer l.close()
	if err := l.restart(); err != nil {
		t.Fatal(err)
	}
	for i, d := range []string{"one", "two", "three and more"} {
		appendFrame(t, l, uint64(i+1), d)
	}
	if got := strings.Join(frameRows(t, db+logSuffix), ","); got != "one,two,three and more" {
		t.Errorf("frames = %s, want one,two,three and more", got)
	}

	// The header and each of these frames take a block.
	b, err := os.ReadFile(db + logSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 4*logBlock {
		t.Fatalf("log of three small frames = %d bytes, want 4 blocks", len(b))
	}
	// A crash in the middle of the third frame: the first two read back.
	cut := filepath.Join(t.TempDir(), "cut")
	if err := os.WriteFile(cut, b[:3*logBlock+frameHeadSize+3], 0o644); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(frameRows(t, cut), ","); got != "one,two" {
		t.Errorf("frames of a cut log = %s, want one,two", got)
	}
	// A bit flipped in the second frame: the first reads back.
	flipped := bytes.Clone(b)
	flipped[2*logBlock+frameHeadSize] ^= 1
	if err := os.WriteFile(cut, flipped, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(frameRows(t, cut), ","); got != "one" {
		t.Errorf("frames of a damaged log = %s, want one", got)
	}

	// Started over, a shorter frame overwrites the first: the old ones after it stay in the
	// file and do not read back.
	if err := l.restart(); err != nil {
		t.Fatal(err)
	}
	appendFrame(t, l, 4, "four")
	if got := strings.Join(frameRows(t, db+logSuffix), ","); got != "four" {
		t.Errorf("frames after starting over = %s, want four", got)
	}
}

// A version-7 lifecyclesim that crashed left changes only its log holds, its frames one after
// another from the header's end: the open of this version upgrades the file and replays them.
func TestSQLiteUpgradeReplaysAPackedLog(t *testing.T) {
	s := openSQLiteWait(t, filepath.Join(t.TempDir(), "lifecyclesim.db"), time.Hour) // no checkpoint
	writeThreeChanges(t, s)
	crashed := filepath.Join(t.TempDir(), "crashed.db")
	copyDB(t, s, crashed)
	toVersion7(t, crashed)
	toPackedLog(t, crashed+logSuffix)
	checkThreeChanges(t, openSQLiteT(t, crashed), "after the upgrade replayed a version-7 log")
}

// toPackedLog rewrites the log at path as a version-7 build wrote it: the old magic, and the
// frames one after another from the header's end.
func toPackedLog(t *testing.T, path string) { rewriteLog(t, path, formatPacked) }

// rewriteLog rewrites the log at path in an earlier build's format (the same salt and frames):
// formatPacked as version 7 wrote it, formatBlocks as versions 8 and 9 did before the sectors
// (a frame in whole blocks, one CRC-32C of the salt's seed over its row and records).
func rewriteLog(t *testing.T, path string, format logFormat) {
	t.Helper()
	rewriteLogWith(t, path, format, func(records []byte) []byte { return records })
}

// rewriteLogWith is rewriteLog with each frame's records changed by change.
func rewriteLogWith(t *testing.T, path string, format logFormat, change func(records []byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	frames := readFrames(b)
	if len(frames) == 0 {
		t.Fatal("the log holds no frames to rewrite")
	}
	magic := map[logFormat][8]byte{formatPacked: logMagicPacked, formatBlocks: logMagicBlocks}[format]
	out := append(append([]byte(nil), magic[:]...), b[8:16]...) // the same salt
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
	seed := crc32.Checksum(b[8:16], castagnoli)
	for _, f := range frames {
		f.data = change(f.data)
		if format == formatBlocks {
			out = append(out, make([]byte, blocks(len(out))-len(out))...)
		}
		body := binary.LittleEndian.AppendUint64(nil, f.row)
		body = append(body, f.data...)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(f.data)))
		out = binary.LittleEndian.AppendUint32(out, crc32.Update(seed, castagnoli, body))
		out = append(out, body...)
	}
	if format == formatBlocks { // the rest of the file as the build left it: zeros to its size
		out = append(out, make([]byte, max(len(b), blocks(len(out)))-len(out))...)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A log the build before the sectors wrote (one checksum per frame) is read as it was: a
// crash's frames replay, and its damaged last frame still reads as a torn write (that format
// cannot tell them apart). The log then starts over in this format, its old frames zeroed,
// so a torn write of this format never finds them.
func TestSQLiteLogOfTheFormatBefore(t *testing.T) {
	path, _ := crashedWithLog(t)
	rewriteLog(t, path+logSuffix, formatBlocks)
	old, err := os.ReadFile(path + logSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if _, format, ok := logHeader(old); !ok || format != formatBlocks || len(readFrames(old)) != logDamageChanges {
		t.Fatalf("the rewritten log: format %v (ok %v), %d frames; want formatBlocks, %d", format, ok, len(readFrames(old)), logDamageChanges)
	}

	damaged := filepath.Join(t.TempDir(), "damaged.db")
	copyFile(t, path, damaged)
	flipped := bytes.Clone(old)
	flipped[lastFrame+frameHeadSize+5] ^= 0x5a
	writeLog(t, damaged+logSuffix, flipped)
	if got := objectsKept(t, openSQLiteWait(t, damaged, time.Hour)); got != logDamageChanges-1 {
		t.Errorf("the format before, last frame damaged: kept %d, want %d (read as a torn write)", got, logDamageChanges-1)
	}

	s := openSQLiteWait(t, path, time.Hour)
	if got := objectsKept(t, s); got != logDamageChanges {
		t.Errorf("the format before: kept %d of %d", got, logDamageChanges)
	}
	b, err := os.ReadFile(path + logSuffix)
	if err != nil {
		t.Fatal(err)
	}
	salt, format, ok := logHeader(b)
	if !ok || format != formatSectors {
		t.Fatalf("after the open, the log's header: format %v (ok %v), want formatSectors", format, ok)
	}
	if len(b) < len(old) {
		t.Errorf("the log shrank from %d to %d bytes", len(old), len(b))
	}
	if !isZero(b[logBlock:]) {
		t.Errorf("the frames of the format before are still in the log")
	}
	// Its next frames are this format's, and a damaged last one is refused.
	m := storetest.NewObject("m7", "acme", "machine")
	storetest.MustCreate(t, s, m, storetest.NewEvent(m, "DEPLOYING"))
	crashed := filepath.Join(t.TempDir(), "crashed.db")
	copyDB(t, s, crashed)
	b, err = os.ReadFile(crashed + logSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if salt2, _, _ := logHeader(b); salt2 != salt || len(readFrames(b)) != 1 {
		t.Fatalf("the log after a create: %d frames of salt %x, want 1 of %x", len(readFrames(b)), salt2, salt)
	}
	b[logBlock+frameHeadSize+5] ^= 0x5a
	writeLog(t, crashed+logSuffix, b)
	if _, err := openStore(t.Context(), crashed, time.Hour); !errors.As(err, new(*LogDamageError)) {
		t.Errorf("the upgraded log's last frame damaged: open = %v, want a *LogDamageError", err)
	}
}

// A write a crash cut short over the frames of an earlier log (the log is written over in
// place) leaves that log's sectors where its own did not get written: they check out with
// the earlier log's tag, so the frame reads as torn, not damaged, wherever the cut is.
func TestChangeLogTornWriteOverAnEarlierLog(t *testing.T) {
	db := filepath.Join(t.TempDir(), "lifecyclesim.db")
	l, _, err := openChangeLog(db)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	if err := l.restart(); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("earlier ", 3*logSector)
	for row := uint64(1); row <= 3; row++ {
		appendFrame(t, l, row, long) // blocks 1 to 3, and more
	}
	if err := l.restart(); err != nil {
		t.Fatal(err)
	}
	appendFrame(t, l, 1, "one")
	// The torn write: the second frame as append lays it out, of which only the first
	// sectors reach the file.
	frame := append(make([]byte, frameHeadSize), strings.Repeat("two ", 2*logSector)...)
	binary.LittleEndian.PutUint32(frame, uint32(len(frame)-frameHeadSize))
	binary.LittleEndian.PutUint64(frame[8:], 2)
	whole := bytes.Clone(l.sectors(frame))
	placed := append(make([]byte, l.off), whole...)
	for i := int(l.off); i < len(placed); i += logSector { // the padding's sectors too
		if got := sectorAt(placed, i, l.seed); got != sectorWritten {
			t.Fatalf("sector %d of the frame's blocks reads as %v, want written", (i-int(l.off))/logSector, got)
		}
	}
	before, err := os.ReadFile(db + logSuffix)
	if err != nil {
		t.Fatal(err)
	}
	rec := logRecord{salt: l.salt, size: int64(len(before))}
	sectors := (len(frame) + sectorData - 1) / sectorData // the rest of its blocks is padding
	if sectors < 3 || sectors*logSector >= len(whole) {
		t.Fatalf("the frame takes %d sectors of %d bytes' blocks; want several, and padding", sectors, len(whole))
	}
	for written := 0; written <= sectors; written++ {
		b := bytes.Clone(before)
		copy(b[l.off:], whole[:written*logSector])
		want := 1
		if written == sectors {
			want = 2 // all of it: the frame checks out
		}
		if c := checkLog(b, true, rec, 0); c.damage != "" || len(c.frames) != want {
			t.Errorf("%d of %d sectors written: %d frames, damage %q; want %d, none", written, sectors, len(c.frames), c.damage, want)
		}
		if written > 0 && written < sectors {
			b[int(l.off)+written*logSector-3] ^= 1 // and one written sector damaged since
			if c := checkLog(b, true, rec, 0); c.damage == "" {
				t.Errorf("%d of %d sectors written, the last damaged since: no damage found", written, sectors)
			}
		}
	}
}

// Where the file system takes direct I/O, the log is written with it; where a write is
// refused (a file system wanting larger blocks than the log's), the log goes on through the
// page cache and the write is done.
func TestChangeLogDirectIO(t *testing.T) {
	dir := t.TempDir()
	l, _, err := openChangeLog(filepath.Join(dir, "lifecyclesim.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	probe, err := os.Create(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	if canDirect := setDirectIO(probe, true) == nil; l.direct != canDirect {
		t.Fatalf("log direct = %v; the file system takes direct I/O: %v", l.direct, canDirect)
	}
	if err := l.restart(); err != nil {
		t.Fatal(err)
	}
	appendFrame(t, l, 1, "one")
	if !l.direct {
		return
	}
	// Half a block at an odd offset: refused by direct I/O, written through the page cache.
	if err := l.write(make([]byte, logBlock/2), l.off+1); err != nil || l.direct {
		t.Fatalf("a write direct I/O refuses = %v, direct %v; want done, through the page cache", err, l.direct)
	}
	appendFrame(t, l, 2, "two")
	if got := strings.Join(frameRows(t, l.f.Name()), ","); got != "one,two" {
		t.Errorf("frames = %s, want one,two", got)
	}
}

// Two stores cannot write one file: the second open is refused while the first is open.
func TestSQLiteLogIsLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lifecyclesim.db")
	s := openSQLiteT(t, path)
	if _, err := openStore(t.Context(), path, checkpointAfter); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("a second open of %s = %v, want an error that says it is in use", path, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	openSQLiteT(t, path)
}

// The lock is on the database file itself: a second open through a symlink, a hard link or
// another spelling of the path is refused while the first is open, and leaves nothing beside
// the name it was given (no log).
func TestSQLiteSecondPathIsRefused(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the database file's own lock is taken on Linux only (flock and SQLite's fcntl locks may interact elsewhere)")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "lifecyclesim.db")
	s := openSQLiteT(t, path)
	symlink, hardlink := filepath.Join(dir, "symlink.db"), filepath.Join(dir, "hardlink.db")
	if err := os.Symlink(path, symlink); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, hardlink); err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{symlink, hardlink, filepath.Join(dir, ".", "sub", "..", "lifecyclesim.db")} {
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := openStore(t.Context(), other, checkpointAfter); err == nil || !strings.Contains(err.Error(), "in use by another lifecyclesim") {
			t.Errorf("a second open through %s = %v, want an error that says the file is in use", other, err)
		}
		if other == symlink || other == hardlink {
			if _, err := os.Stat(other + logSuffix); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the refused open through %s left %s (%v)", other, other+logSuffix, err)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	openSQLiteT(t, symlink) // once it is free, any path opens it
}

// A file of an earlier version that a lifecyclesim of that version has open is not upgraded
// under it by a second one (the upgrade rewrites the events table, which would hold up the
// first one's checkpoints): the second is refused first.
func TestSQLiteLockedFileIsNotUpgraded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lifecyclesim.db")
	s := openSQLiteT(t, path)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	toVersion7(t, path)
	running, _, err := openChangeLog(path) // the version-7 lifecyclesim, holding the log
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openStore(t.Context(), path, checkpointAfter); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("an open of a file in use = %v, want an error that says it is in use", err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version int
	if err := db.QueryRowContext(t.Context(), "PRAGMA user_version").Scan(&version); err != nil || version != 7 {
		t.Errorf("user_version of the file in use after the refused open = %d, %v; want 7, untouched", version, err)
	}
	if err := running.close(); err != nil {
		t.Fatal(err)
	}
	openSQLiteT(t, path) // once it is free, the upgrade runs
}

// A crash after a checkpoint and before the log started over leaves frames the tables already
// hold: the next open does not apply them again (an object would go back to an older version).
func TestSQLiteSkipsCheckpointedFrames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lifecyclesim.db")
	s := openSQLiteWait(t, path, time.Hour)
	m1 := storetest.NewObject("m1", "acme", "machine")
	storetest.MustCreate(t, s, m1, storetest.NewEvent(m1, "DEPLOYING"))
	m1.State = "RUNNING"
	storetest.MustUpdate(t, s, m1, storetest.NewEvent(m1, "RUNNING"))
	old, err := os.ReadFile(path + logSuffix) // two frames, not checkpointed
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openSQLiteWait(t, path, time.Hour)
	m1 = storetest.MustGet(t, s, "acme", "m1")
	m1.State = "STOPPING"
	storetest.MustUpdate(t, s, m1, storetest.NewEvent(m1, "STOPPING"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+logSuffix, old, 0o644); err != nil {
		t.Fatal(err)
	}

	s = openSQLiteT(t, path)
	storetest.CheckObject(t, s, "acme", "m1", "after the old frames were put back (none may be applied again)", "STOPPING", 3, 3)
}

// The README's backup advice: a store closed (lifecyclesim stopped) has folded its log into
// the file, so a copy of the file alone holds every change, events and keys included.
func TestSQLiteClosedFileHoldsEverything(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lifecyclesim.db")
	s := openSQLiteWait(t, path, time.Hour) // no checkpoint but the one Close makes
	writeThreeChanges(t, s)
	if rows := journalRows(t, s); rows != 3 {
		t.Fatalf("frames before Close = %d, want 3 (nothing checkpointed yet)", rows)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The backup: the file alone, without FILE-log (nor FILE-wal, which the close folded in).
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(t.TempDir(), "backup.db")
	if err := os.WriteFile(copied, b, 0o644); err != nil {
		t.Fatal(err)
	}
	checkThreeChanges(t, openSQLiteT(t, copied), "in the copy")
}

// BenchmarkChangeLogAppend appends synced frames of 12 KB (a group of some 16 actions) with
// direct I/O and through the page cache, over a log a checkpoint started over: cpu-µs/op is the process's CPU per synced append
// (the kernel's included), which is what the writer pays for a group. Run:
// go test -run '^$' -bench ChangeLogAppend -benchtime 2000x ./simulator/store/sqlitestore
func BenchmarkChangeLogAppend(b *testing.B) {
	for _, direct := range []bool{true, false} {
		b.Run(map[bool]string{true: "direct", false: "page-cache"}[direct], func(b *testing.B) {
			l, _, err := openChangeLog(filepath.Join(b.TempDir(), "lifecyclesim.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer l.close()
			if !direct && l.direct {
				if err := setDirectIO(l.f, false); err != nil {
					b.Fatal(err)
				}
				l.direct = false
			}
			if direct && !l.direct {
				b.Skip("the file system takes no direct I/O")
			}
			frame := make([]byte, frameHeadSize+12<<10)
			row := uint64(0)
			appendOne := func() {
				if l.off > 16<<20 { // about a checkpoint's worth: the log starts over
					if err := l.restart(); err != nil {
						b.Fatal(err)
					}
				}
				row++
				if err := l.append(row, frame); err != nil {
					b.Fatal(err)
				}
			}
			// Once a checkpoint started it over, the log is written over in space it has.
			if err := l.restart(); err != nil {
				b.Fatal(err)
			}
			for l.off <= 16<<20 {
				appendOne()
			}
			var ru0, ru1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			for b.Loop() {
				appendOne()
			}
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// BenchmarkChangeLogFormats compares this format's synced appends (sectors) with the one
// before's (blocks: one checksum per frame) side by side: two logs in one directory take
// turns, rounds of 4 appends each, the order swapped every round, so a busy disk or host
// weighs on both alike. It reports each format's median and least time and CPU per append
// over the rounds, and the ratios of the medians (sectors/blocks). Run:
// go test -run '^$' -bench ChangeLogFormats -benchtime 300x ./simulator/store/sqlitestore
func BenchmarkChangeLogFormats(b *testing.B) {
	for _, size := range []int{12 << 10, 400} {
		for _, direct := range []bool{true, false} {
			b.Run(fmt.Sprintf("%dB/%s", size, map[bool]string{true: "direct", false: "page-cache"}[direct]), func(b *testing.B) {
				benchmarkFormats(b, size, direct)
			})
		}
	}
}

// benchmarkFormats is BenchmarkChangeLogFormats for one frame size and way of writing.
func benchmarkFormats(b *testing.B, size int, direct bool) {
	const perRound = 4
	formats := []logFormat{formatSectors, formatBlocks}
	logs := make([]*changeLog, len(formats))
	frame := make([]byte, frameHeadSize+size)
	for i := range frame[frameHeadSize:] {
		frame[frameHeadSize+i] = byte(i)
	}
	rows := make([]uint64, len(formats))
	appendOne := func(i int) {
		l := logs[i]
		if l.off > 16<<20 { // about a checkpoint's worth: the log starts over
			if err := l.restart(); err != nil {
				b.Fatal(err)
			}
		}
		rows[i]++
		if err := l.append(rows[i], frame); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	for i, format := range formats {
		l, _, err := openChangeLog(filepath.Join(dir, fmt.Sprintf("%d.db", i)))
		if err != nil {
			b.Fatal(err)
		}
		defer l.close()
		l.format = format
		if !direct && l.direct {
			if err := setDirectIO(l.f, false); err != nil {
				b.Fatal(err)
			}
			l.direct = false
		}
		if direct && !l.direct {
			b.Skip("the file system takes no direct I/O")
		}
		logs[i] = l
		// Once a checkpoint started it over, the log is written over in space it has.
		if err := l.restart(); err != nil {
			b.Fatal(err)
		}
		for l.off <= 16<<20 {
			appendOne(i)
		}
	}
	cpuNow := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	wall := make([][]float64, len(formats)) // µs per append, per round
	cpu := make([][]float64, len(formats))
	round := 0
	for b.Loop() {
		for k := range formats {
			i := (k + round) % len(formats)
			start, cpu0 := time.Now(), cpuNow()
			for range perRound {
				appendOne(i)
			}
			wall[i] = append(wall[i], float64(time.Since(start).Microseconds())/perRound)
			cpu[i] = append(cpu[i], float64((cpuNow()-cpu0).Microseconds())/perRound)
		}
		round++
	}
	median := func(v []float64) float64 { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
	for i, name := range []string{"sectors", "blocks"} {
		b.ReportMetric(median(wall[i]), name+"-med-µs/append")
		b.ReportMetric(slices.Min(wall[i]), name+"-min-µs/append")
		b.ReportMetric(median(cpu[i]), name+"-med-cpu-µs/append")
		b.ReportMetric(slices.Min(cpu[i]), name+"-min-cpu-µs/append")
	}
	b.ReportMetric(median(wall[0])/median(wall[1]), "med-ratio")
	b.ReportMetric(median(cpu[0])/median(cpu[1]), "med-cpu-ratio")
}

// BenchmarkChangeLogLayout is the CPU of laying a frame out for its write alone (no write),
// in this format and the one before: what the sectors add to an append.
func BenchmarkChangeLogLayout(b *testing.B) {
	for _, size := range []int{12 << 10, 400} {
		for _, format := range []logFormat{formatSectors, formatBlocks} {
			b.Run(fmt.Sprintf("%dB/%s", size, map[logFormat]string{formatSectors: "sectors", formatBlocks: "blocks"}[format]), func(b *testing.B) {
				l := &changeLog{format: format, seed: 0x12345678, off: logBlock}
				frame := make([]byte, frameHeadSize+size)
				for b.Loop() {
					if format == formatSectors {
						l.sectors(frame)
					} else {
						binary.LittleEndian.PutUint32(frame[4:], crc32.Update(l.seed, castagnoli, frame[8:]))
						copy(l.blocks(len(frame)), frame)
					}
				}
			})
		}
	}
}

// A frame larger than the buffer the log keeps is written from blocks of its own, and the
// buffer stays at its bound.
func TestChangeLogLargeFrame(t *testing.T) {
	db := filepath.Join(t.TempDir(), "lifecyclesim.db")
	l, _, err := openChangeLog(db)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	if err := l.restart(); err != nil {
		t.Fatal(err)
	}
	large := strings.Repeat("x", 3*maxKeptBlock+5)
	appendFrame(t, l, 1, "small")
	appendFrame(t, l, 2, large)
	appendFrame(t, l, 3, "small again")
	if got := frameRows(t, db+logSuffix); len(got) != 3 || got[1] != large || got[2] != "small again" {
		t.Errorf("%d frames read back, want small, the large one, small again", len(got))
	}
	if len(l.block) > maxKeptBlock {
		t.Errorf("the log keeps a buffer of %d bytes after a large frame, want at most %d", len(l.block), maxKeptBlock)
	}
}

// A checkpoint reads the log back a window at a time (readBackWindow): frames across the
// windows' edges and frames larger than a window read back whole, in each format a log is
// written in, and what a read back allocates is about the frames' data, not the log's padded
// blocks, which it read whole before (four times the data here, and so live heap while a
// checkpoint ran).
func TestChangeLogReadBack(t *testing.T) {
	for _, format := range []logFormat{formatSectors, formatBlocks} {
		t.Run(fmt.Sprintf("format %d", format), func(t *testing.T) {
			l, _, err := openChangeLog(filepath.Join(t.TempDir(), "lifecyclesim.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer l.close()
			l.format = format
			if err := l.restart(); err != nil {
				t.Fatal(err)
			}
			const small = 400 // frames of a block each: the log is 4x their data
			var want []string
			for row := 1; row <= small; row++ {
				want = append(want, fmt.Sprintf("%04d %s", row, strings.Repeat("x", logBlock/4)))
			}
			for i, d := range want {
				appendFrame(t, l, uint64(i+1), d)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			frames, err := l.readBack(len(want))
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatalf("readBack = %v", err)
			}
			data := 0
			for i, f := range frames {
				if f.row != uint64(i+1) || string(f.data) != want[i] {
					t.Fatalf("frame %d read back as row %d, %.10q, want row %d, %.10q", i, f.row, f.data, i+1, want[i])
				}
				data += len(f.data)
			}
			if alloc, log := after.TotalAlloc-before.TotalAlloc, uint64(l.off); alloc > log/2 {
				t.Errorf("readBack of %d bytes of frames in a log of %d allocated %d bytes, want at most half the log's", data, log, alloc)
			}

			// Frames larger than a window, between small ones.
			large := strings.Repeat("y", readBackWindow+3*logSector+7)
			for _, d := range []string{large, "small", large + "z", "last"} {
				want = append(want, d)
				appendFrame(t, l, uint64(len(want)), d)
			}
			frames, err = l.readBack(len(want))
			if err != nil || len(frames) != len(want) {
				t.Fatalf("readBack = %d frames, %v; want %d", len(frames), err, len(want))
			}
			for i, f := range frames {
				if f.row != uint64(i+1) || string(f.data) != want[i] {
					t.Errorf("frame %d read back as row %d, %d bytes, want row %d, %d bytes", i, f.row, len(f.data), i+1, len(want[i]))
				}
			}
			if _, err := l.readBack(len(want) + 1); err == nil {
				t.Errorf("readBack of one frame more than appended: no error")
			}
		})
	}
}
