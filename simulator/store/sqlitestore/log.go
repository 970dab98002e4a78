package sqlitestore

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
	"syscall"
	"unsafe"
)

// changeLog is the SQLite store's journal from schema version 7 on: a file beside the
// database (FILE-log) that the writer appends each group of records to as one frame, with one
// write and one data sync. Appending a row to a journal table cost about three times the CPU
// of that (a transaction's locks, the WAL's frame headers and checksums of every page, the
// copy of those pages into the file, and the checkpoint's delete of the rows read them back);
// the group's sync is the same one.
//
// The file is a header and frames, each in whole blocks of logBlock bytes. The header holds a
// magic number and a salt; each frame holds its length, a CRC-32C of the salt, its row number
// and its records, then its row number and the records (the journal's encoding, see
// record.encode). Reading stops at the first frame that does not check out: one cut short by
// a crash, or one a previous salt wrote; the open then checks the rest against what the
// database recorded of the log (logcheck.go). A checkpoint applies all the log holds and
// records its last row in the meta table, in its transaction; frames up to that row are never
// applied again. Then the log starts over: a new salt in the header (synced), and frames are written
// from its end again, over the old ones, in space the file already has (a data sync then
// writes no metadata).
//
// Where the system allows it (Linux), frames are written with direct I/O: in whole aligned
// blocks, straight to the disk, so the data sync that follows only flushes the disk's cache.
// Through the page cache, the sync also wrote the pages back, and often the inode: on the
// (virtual) machines measured, a synced append cost 5-35% more CPU that way, by how busy
// their host was (BenchmarkChangeLogAppend).
type changeLog struct {
	mu   sync.Mutex // held by append and restart; tests hold it to keep the writer waiting
	f    *os.File   // nil for a database in memory: appends are not written
	salt [8]byte    // the header's salt (zero before the first restart)
	seed uint32     // the CRC-32C of the salt, where each frame's checksum starts
	off  int64      // where the next frame goes
	// direct is set while the file is open for direct I/O.
	direct bool
	// block is where frames are written from: whole blocks, aligned in memory for direct I/O.
	block []byte
	// closed is set by close.
	closed bool
	// refuse, when set, fails appends with its error (tests of a failing disk).
	refuse atomic.Pointer[error]
	// held is what the file held when it was opened, until the open checked and replayed it;
	// existed says whether the file was there (the open creates it).
	held    []byte
	existed bool
}

// logSuffix names the log after the database, as SQLite names its WAL (FILE-wal).
const logSuffix = "-log"

// logMagic starts a log whose header and frames are in whole blocks (schema version 8 on);
// logMagicPacked one whose frames follow each other from the header's end (version 7), which a
// file of that version may leave for the next open to replay.
var (
	logMagic       = [8]byte{'l', 'c', 's', 'i', 'm', 'l', 'g', '2'}
	logMagicPacked = [8]byte{'l', 'c', 's', 'i', 'm', 'l', 'o', 'g'}
)

const (
	logHeaderSize = 8 + 8 + 4 // magic, salt, CRC-32C of the two
	frameHeadSize = 4 + 4 + 8 // payload length, CRC-32C, row
	// logBlock is the unit the log is written in: a multiple of the logical block size of the
	// disks direct I/O writes to (512 or 4096 bytes), at offsets and addresses aligned to it.
	logBlock = 4096
	// maxFrame bounds a frame's length when reading (a damaged length must not allocate).
	maxFrame = 1 << 30
	// logMinSize is the size a new log is given (sparse: it takes no disk until written). A
	// database records its log's size whenever the log starts over (logRecord), and the log
	// is written in place from then on, so a crash never leaves it shorter: a shorter log was
	// cut. Frames past the recorded size grew the file, and a cut there cannot be told from a
	// crash's; the first log has this much room before that can happen.
	logMinSize = 1 << 20
)

// blocks rounds n up to whole log blocks.
func blocks(n int) int { return (n + logBlock - 1) &^ (logBlock - 1) }

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
// against other processes, reads its frames (as a database that records nothing of its log
// reads them: up to the first that does not check out; checkLog judges the rest). Call
// restart before appending.
func openChangeLog(dbPath string) (*changeLog, []logFrame, error) {
	_, statErr := os.Stat(dbPath + logSuffix)
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
	l := &changeLog{f: f, direct: setDirectIO(f, true) == nil, held: b, existed: statErr == nil}
	if salt, _, ok := logHeader(b); ok {
		l.salt = salt
	}
	return l, readFrames(b), nil
}

// logHeader reads a log's header: its salt and whether its frames are in whole blocks; ok is
// false when it does not check out.
func logHeader(b []byte) (salt [8]byte, aligned, ok bool) {
	if len(b) < logHeaderSize || binary.LittleEndian.Uint32(b[16:20]) != crc32.Checksum(b[:16], castagnoli) {
		return salt, false, false
	}
	switch [8]byte(b[:8]) {
	case logMagic:
		aligned = true
	case logMagicPacked:
	default:
		return salt, false, false
	}
	return [8]byte(b[8:16]), aligned, true
}

// frameAt reads the frame at off if one written after a header with this salt's seed is
// there (n is the bytes it takes, unaligned).
func frameAt(b []byte, off int, seed uint32) (f logFrame, n int, ok bool) {
	if off < 0 || len(b)-off < frameHeadSize {
		return f, 0, false
	}
	h := b[off:]
	size := uint64(binary.LittleEndian.Uint32(h))
	if size > maxFrame || size > uint64(len(h)-frameHeadSize) {
		return f, 0, false
	}
	if binary.LittleEndian.Uint32(h[4:]) != crc32.Update(seed, castagnoli, h[8:frameHeadSize+size]) {
		return f, 0, false
	}
	return logFrame{row: binary.LittleEndian.Uint64(h[8:]), data: h[frameHeadSize : frameHeadSize+size]}, frameHeadSize + int(size), true
}

// readFrames reads a log's frames, up to the first that does not check out (none when the
// header does not).
func readFrames(b []byte) []logFrame {
	salt, aligned, ok := logHeader(b)
	if !ok {
		return nil
	}
	frames, _ := walkFrames(b, crc32.Checksum(salt[:], castagnoli), aligned)
	return frames
}

// walkFrames reads the frames written after a header whose salt has this seed, from the
// header's end up to the first that does not check out, and says where that one starts.
func walkFrames(b []byte, seed uint32, aligned bool) (frames []logFrame, stop int) {
	align := func(n int) int { return n }
	if aligned {
		align = blocks
	}
	off := align(logHeaderSize)
	for {
		f, n, ok := frameAt(b, off, seed)
		if !ok {
			return frames, off
		}
		frames = append(frames, f)
		off += align(n)
	}
}

// newSalt gives a log's next salt.
func newSalt() ([8]byte, error) {
	var salt [8]byte
	_, err := rand.Read(salt[:])
	return salt, err
}

// restart starts the log over with a new salt: what it held no longer reads back. The caller
// makes sure everything in it is checkpointed (or must never be applied). The store calls
// restartWith, once the database records the salt.
func (l *changeLog) restart() error {
	salt, err := newSalt()
	if err != nil {
		return err
	}
	return l.restartWith(salt)
}

// restartWith is restart with the given salt.
func (l *changeLog) restartWith(salt [8]byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seed, l.off = crc32.Checksum(salt[:], castagnoli), int64(blocks(logHeaderSize))
	if l.f == nil {
		l.salt = salt
		return nil
	}
	h := l.blocks(logHeaderSize)
	copy(h, logMagic[:])
	copy(h[8:], salt[:])
	binary.LittleEndian.PutUint32(h[16:], crc32.Checksum(h[:16], castagnoli))
	if err := l.write(h, 0); err != nil {
		return fmt.Errorf("start the log over: %w", err)
	}
	if err := syncData(l.f); err != nil {
		return fmt.Errorf("start the log over: %w", err)
	}
	l.salt = salt // what the header holds (until then, the old salt: see logRecord.prev)
	return nil
}

// blocks gives the whole blocks that hold n bytes, from l.block (grown as needed), zeroed
// past n. A frame larger than maxKeptBlock (a 10,000-VM MCI's create writes megabytes) gets
// blocks of its own, which are not kept.
func (l *changeLog) blocks(n int) []byte {
	size := blocks(n)
	if size > maxKeptBlock {
		return alignedBlocks(size)
	}
	if len(l.block) < size {
		l.block = alignedBlocks(min(max(size, 2*len(l.block)), maxKeptBlock))
	}
	b := l.block[:size]
	clear(b[n:])
	return b
}

// maxKeptBlock bounds the buffer the log keeps for its writes.
const maxKeptBlock = 1 << 20

// alignedBlocks allocates size bytes (whole blocks) at an address aligned to logBlock, as
// direct I/O needs. The garbage collector does not move heap objects.
func alignedBlocks(size int) []byte {
	b := make([]byte, size+logBlock)
	skip := (logBlock - int(uintptr(unsafe.Pointer(unsafe.SliceData(b)))%logBlock)) % logBlock
	return b[skip : skip+size : skip+size]
}

// write writes whole blocks at off. If the file system refuses direct I/O for them (EINVAL:
// some want larger blocks), the log goes on through the page cache.
func (l *changeLog) write(b []byte, off int64) error {
	_, err := l.f.WriteAt(b, off)
	if err != nil && l.direct && errors.Is(err, syscall.EINVAL) {
		if serr := setDirectIO(l.f, false); serr != nil {
			return errors.Join(err, serr)
		}
		l.direct = false
		_, err = l.f.WriteAt(b, off)
	}
	return err
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
	b := l.blocks(len(frame))
	copy(b, frame)
	if err := l.write(b, l.off); err != nil {
		return err
	}
	if err := syncData(l.f); err != nil {
		return err
	}
	l.off += int64(len(b))
	return nil
}

// readBack reads the frames appended since the log last started over, which must be n, for
// a checkpoint (the store keeps no copy of them). A frame whose append failed is past l.off,
// so it is never read back.
func (l *changeLog) readBack(n int) ([]logFrame, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := alignedBlocks(int(l.off))
	_, err := l.f.ReadAt(b, 0)
	if err != nil && l.direct && errors.Is(err, syscall.EINVAL) { // as write does
		if serr := setDirectIO(l.f, false); serr != nil {
			return nil, errors.Join(err, serr)
		}
		l.direct = false
		_, err = l.f.ReadAt(b, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("read back %s: %w", l.f.Name(), err)
	}
	frames, stop := walkFrames(b, l.seed, true)
	if len(frames) != n || int64(stop) != l.off {
		return nil, fmt.Errorf("read back %s: %d frames up to byte %d, where %d were appended up to byte %d", l.f.Name(), len(frames), stop, n, l.off)
	}
	return frames, nil
}

// grow gives a log smaller than logMinSize that size (zeros), durably: before the database
// records its size, once it is checked.
func (l *changeLog) grow() error {
	size, err := l.size()
	if err != nil || l.f == nil || size >= logMinSize {
		return err
	}
	if err := l.f.Truncate(logMinSize); err != nil {
		return fmt.Errorf("size %s: %w", l.f.Name(), err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("size %s: %w", l.f.Name(), err)
	}
	return nil
}

// size is the log file's size (0 for a database in memory).
func (l *changeLog) size() (int64, error) {
	if l.f == nil {
		return 0, nil
	}
	fi, err := l.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
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
