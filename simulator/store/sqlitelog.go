package store

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// changeLog is the SQLite store's journal from schema version 7 on: a file beside the
// database (FILE-log) that the writer appends each group of records to as one frame, with one
// write and one data sync. Appending a row to a journal table cost about three times the CPU
// of that (a transaction's locks, the WAL's frame headers and checksums of every page, the
// copy of those pages into the file, and the checkpoint's delete of the rows read them back);
// the group's sync is the same one.
//
// The file is a header and frames. The header holds a magic number and a salt; each frame
// holds its length, a CRC-32C of the salt, its row number and its records, then its row number
// and the records (the journal's encoding, see record.encode). Reading stops at the first frame
// that does not check out: one cut short by a crash, or one a previous salt wrote. A
// checkpoint applies all the log holds and records its last row in the meta table, in its
// transaction; frames up to that row are never applied again. Then the log starts over: a new
// salt in the header (synced), and frames are written from its end again, over the old ones,
// in space the file already has (a data sync then writes no metadata).
type changeLog struct {
	mu   sync.Mutex // held by append and restart; tests hold it to keep the writer waiting
	f    *os.File   // nil for a database in memory: appends are not written
	seed uint32     // the CRC-32C of the salt, where each frame's checksum starts
	off  int64      // where the next frame goes
	// closed is set by close.
	closed bool
	// refuse, when set, fails appends with its error (tests of a failing disk).
	refuse atomic.Pointer[error]
}

// logSuffix names the log after the database, as SQLite names its WAL (FILE-wal).
const logSuffix = "-log"

var logMagic = [8]byte{'l', 'c', 's', 'i', 'm', 'l', 'o', 'g'}

const (
	logHeaderSize = 8 + 8 + 4 // magic, salt, CRC-32C of the two
	frameHeadSize = 4 + 4 + 8 // payload length, CRC-32C, row
	// maxFrame bounds a frame's length when reading (a damaged length must not allocate).
	maxFrame = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errLogInUse is lockFile's answer when another process (or another store in this one) holds
// the log's lock.
var errLogInUse = errors.New("the log is locked")

// logFrame is a frame read back: its row number and its records' encoding.
type logFrame struct {
	row  uint64
	data []byte
}

// openChangeLog opens (creating it if needed) the log beside the database at dbPath, locks it
// against other processes, and reads its frames. Call restart before appending.
func openChangeLog(dbPath string) (*changeLog, []logFrame, error) {
	f, err := os.OpenFile(dbPath+logSuffix, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, err
	}
	if err := lockFile(f); err != nil {
		if errors.Is(err, errLogInUse) {
			err = fmt.Errorf("%s is in use by another lifecyclesim", f.Name())
		} else {
			err = fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		return nil, nil, errors.Join(err, f.Close())
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("read %s: %w", f.Name(), err), f.Close())
	}
	return &changeLog{f: f}, readFrames(b), nil
}

// readFrames reads a log's frames, up to the first that does not check out (none when the
// header does not).
func readFrames(b []byte) []logFrame {
	if len(b) < logHeaderSize || [8]byte(b[:8]) != logMagic ||
		binary.LittleEndian.Uint32(b[16:20]) != crc32.Checksum(b[:16], castagnoli) {
		return nil
	}
	seed := crc32.Checksum(b[8:16], castagnoli) // of the salt
	var out []logFrame
	for b = b[logHeaderSize:]; len(b) >= frameHeadSize; {
		n := uint64(binary.LittleEndian.Uint32(b))
		if n > maxFrame || n > uint64(len(b)-frameHeadSize) {
			break
		}
		if binary.LittleEndian.Uint32(b[4:]) != crc32.Update(seed, castagnoli, b[8:frameHeadSize+n]) {
			break
		}
		out = append(out, logFrame{row: binary.LittleEndian.Uint64(b[8:]), data: b[frameHeadSize : frameHeadSize+n]})
		b = b[frameHeadSize+n:]
	}
	return out
}

// restart starts the log over with a new salt: what it held no longer reads back. The caller
// makes sure everything in it is checkpointed (or must never be applied).
func (l *changeLog) restart() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var salt [8]byte
	if _, err := rand.Read(salt[:]); err != nil {
		return err
	}
	l.seed, l.off = crc32.Checksum(salt[:], castagnoli), logHeaderSize
	if l.f == nil {
		return nil
	}
	h := make([]byte, 0, logHeaderSize)
	h = append(append(h, logMagic[:]...), salt[:]...)
	h = binary.LittleEndian.AppendUint32(h, crc32.Checksum(h, castagnoli))
	if _, err := l.f.WriteAt(h, 0); err != nil {
		return fmt.Errorf("start the log over: %w", err)
	}
	if err := syncData(l.f); err != nil {
		return fmt.Errorf("start the log over: %w", err)
	}
	return nil
}

// append writes a frame and syncs it. frame is the frame's head (frameHeadSize bytes, which
// append fills in) followed by its records. After a failed append the log must be restarted:
// what the failed frame left in the file is unknown.
func (l *changeLog) append(row uint64, frame []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refuse.Load(); err != nil {
		return *err
	}
	if l.f == nil {
		return nil
	}
	binary.LittleEndian.PutUint32(frame, uint32(len(frame)-frameHeadSize))
	binary.LittleEndian.PutUint64(frame[8:], row)
	binary.LittleEndian.PutUint32(frame[4:], crc32.Update(l.seed, castagnoli, frame[8:]))
	if _, err := l.f.WriteAt(frame, l.off); err != nil {
		return err
	}
	if err := syncData(l.f); err != nil {
		return err
	}
	l.off += int64(len(frame))
	return nil
}

// close closes the file (once: closing a store twice is fine). Nothing appends after it.
func (l *changeLog) close() error {
	if l == nil || l.f == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	return l.f.Close()
}
