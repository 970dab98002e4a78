package sqlitestore

import (
	"bytes"
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
// magic number (which says the frames' format) and a salt. Each frame is its length, its row
// number and its records (the journal's encoding, see record.encode), laid out in sectors of
// logSector bytes: each sector holds sectorData bytes of the frame and ends in the log's tag
// for that sector (from the salt and the sector's place in the file) and a CRC-32C of the
// sector. Reading stops at the first frame that does not check out: one cut short by a crash,
// or one a previous salt wrote; the open then checks the rest against what the database
// recorded of the log (logcheck.go). A checkpoint applies all the log holds and records its
// last row in the meta table, in its transaction; frames up to that row are never applied
// again. Then the log starts over: a new salt in the header (synced), and frames are written
// from its end again, over the old ones, in space the file already has (a data sync then
// writes no metadata).
//
// The sectors tell a frame damaged since it was written from one a crash cut short. A disk
// writes a sector whole or not at all, so a write cut short leaves each sector of its frame
// either written (it checks out, with this log's tag) or as it was: zeros, or a sector an
// earlier log wrote, which checks out with another tag. A sector that does not check out at
// all was changed after it was written: damage (tailDamage). A log of an earlier format
// (formatBlocks, one checksum over each frame) is read as it was written; the next start
// over zeroes its old frames and writes this format (changeLog.clean).
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
	// format is the layout restart and append write: formatSectors (tests and benchmarks of
	// the earlier layout set formatBlocks).
	format logFormat
	// clean is set once everything past the header is zeros or sectors of this format, so a
	// sector a torn write left as it was checks out with another tag or is zeros. Until then,
	// restart zeroes what is there first (a log an earlier build wrote).
	clean bool
}

// logSuffix names the log after the database, as SQLite names its WAL (FILE-wal).
const logSuffix = "-log"

// logFormat is how a log lays out its frames; the header's magic says which.
type logFormat int

const (
	// formatPacked (schema version 7): frames one after another from the header's end, each
	// with a CRC-32C over it.
	formatPacked logFormat = iota
	// formatBlocks (version 8 and 9 until this format): each frame in whole blocks, with a
	// CRC-32C over it. A damaged frame and one a crash cut short read alike.
	formatBlocks
	// formatSectors: each frame in whole blocks of sectors, each sector with its tag and
	// CRC-32C (see changeLog).
	formatSectors
)

// The magic numbers of the formats.
var (
	logMagic       = [8]byte{'l', 'c', 's', 'i', 'm', 'l', 'g', '3'} // formatSectors
	logMagicBlocks = [8]byte{'l', 'c', 's', 'i', 'm', 'l', 'g', '2'}
	logMagicPacked = [8]byte{'l', 'c', 's', 'i', 'm', 'l', 'o', 'g'}
)

const (
	logHeaderSize = 8 + 8 + 4 // magic, salt, CRC-32C of the two
	// frameHeadSize is a frame's head: its payload's length, a CRC-32C of it and its row
	// (formatSectors leaves the CRC-32C zero: each sector has its own).
	frameHeadSize = 4 + 4 + 8
	// logSector is the unit a disk writes whole or not at all (the smallest there is; a disk
	// of 4096-byte sectors writes eight of these at once). sectorData bytes of each carry the
	// frame, then its tag and its CRC-32C.
	logSector  = 512
	sectorData = logSector - 4 - 4
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
	l := &changeLog{f: f, direct: setDirectIO(f, true) == nil, held: b, existed: statErr == nil, format: formatSectors}
	salt, format, ok := logHeader(b)
	if ok {
		l.salt = salt
	}
	rest := b[min(len(b), blocks(logHeaderSize)):]
	l.clean = ok && format == formatSectors || len(rest) == 0 || isZero(rest)
	return l, readFrames(b), nil
}

// logHeader reads a log's header: its salt and its frames' format; ok is false when it does
// not check out.
func logHeader(b []byte) (salt [8]byte, format logFormat, ok bool) {
	if len(b) < logHeaderSize || binary.LittleEndian.Uint32(b[16:20]) != crc32.Checksum(b[:16], castagnoli) {
		return salt, 0, false
	}
	switch [8]byte(b[:8]) {
	case logMagic:
		format = formatSectors
	case logMagicBlocks:
		format = formatBlocks
	case logMagicPacked:
		format = formatPacked
	default:
		return salt, 0, false
	}
	return [8]byte(b[8:16]), format, true
}

// frameAt reads the frame at off if one written after a header with this salt's seed is
// there (n is the bytes it takes, unaligned).
func frameAt(b []byte, off int, seed uint32, format logFormat) (f logFrame, n int, ok bool) {
	return frameIn(b, 0, off, seed, format)
}

// frameIn is frameAt where b holds the log from its byte base on (off is the frame's place in
// the log, from base on). The data of a frame of formatSectors is a copy; of the formats
// before, it points into b.
func frameIn(b []byte, base, off int, seed uint32, format logFormat) (f logFrame, n int, ok bool) {
	if format == formatSectors {
		return sectorFrameIn(b, base, off, seed)
	}
	if off < base || len(b)-(off-base) < frameHeadSize {
		return f, 0, false
	}
	h := b[off-base:]
	size := uint64(binary.LittleEndian.Uint32(h))
	if size > maxFrame || size > uint64(len(h)-frameHeadSize) {
		return f, 0, false
	}
	if binary.LittleEndian.Uint32(h[4:]) != crc32.Update(seed, castagnoli, h[8:frameHeadSize+size]) {
		return f, 0, false
	}
	return logFrame{row: binary.LittleEndian.Uint64(h[8:]), data: h[frameHeadSize : frameHeadSize+size]}, frameHeadSize + int(size), true
}

// sectorFrameIn is frameIn for formatSectors: every sector the frame takes checks out with
// this log's tag. Its data is copied out of the sectors.
func sectorFrameIn(b []byte, base, off int, seed uint32) (f logFrame, n int, ok bool) {
	if sectorIn(b, base, off, seed) != sectorWritten {
		return f, 0, false
	}
	size := int(binary.LittleEndian.Uint32(b[off-base:]))
	if size > maxFrame {
		return f, 0, false
	}
	total := frameHeadSize + size
	sectors := (total + sectorData - 1) / sectorData
	if sectors*logSector > len(b)-(off-base) {
		return f, 0, false
	}
	data := make([]byte, 0, total)
	for i := range sectors {
		at := off - base + i*logSector
		if i > 0 && sectorIn(b, base, off+i*logSector, seed) != sectorWritten {
			return f, 0, false
		}
		data = append(data, b[at:at+min(sectorData, total-len(data))]...)
	}
	return logFrame{row: binary.LittleEndian.Uint64(data[8:]), data: data[frameHeadSize:]}, sectors * logSector, true
}

// frameExtent is how many bytes from off the frame whose head is at the start of h takes, by
// the length its head gives (ok false for a length no frame has).
func frameExtent(h []byte, format logFormat) (n int, ok bool) {
	size := int(binary.LittleEndian.Uint32(h))
	if size > maxFrame {
		return 0, false
	}
	if format == formatSectors {
		return (frameHeadSize + size + sectorData - 1) / sectorData * logSector, true
	}
	return frameHeadSize + size, true
}

// sectorState is what a sector of a formatSectors log holds, for the log of one seed.
type sectorState int

const (
	// sectorWritten: it checks out with this log's tag for its place.
	sectorWritten sectorState = iota
	// sectorAsBefore: zeros, missing (past the file's end), or a sector that checks out with
	// another tag (an earlier log's): what a write the disk never did leaves.
	sectorAsBefore
	// sectorDamaged: it does not check out at all. A disk writes a sector whole or not at
	// all, so it changed after it was written.
	sectorDamaged
)

// sectorTag is the tag of the sector at off in the log of seed: another log's, or another
// place's, differs.
func sectorTag(seed uint32, off int) uint32 { return seed ^ uint32(off/logSector) }

// sealSector ends the sector at off of the log of seed in its tag and CRC-32C.
func sealSector(sec []byte, seed uint32, off int) {
	binary.LittleEndian.PutUint32(sec[sectorData:], sectorTag(seed, off))
	binary.LittleEndian.PutUint32(sec[sectorData+4:], crc32.Checksum(sec[:sectorData+4], castagnoli))
}

// sectorAt says what the sector at off holds for the log of seed.
func sectorAt(b []byte, off int, seed uint32) sectorState { return sectorIn(b, 0, off, seed) }

// sectorIn is sectorAt where b holds the log from its byte base on.
func sectorIn(b []byte, base, off int, seed uint32) sectorState {
	if off < base || len(b)-(off-base) < logSector {
		return sectorAsBefore
	}
	sec := b[off-base : off-base+logSector]
	if binary.LittleEndian.Uint32(sec[sectorData+4:]) != crc32.Checksum(sec[:sectorData+4], castagnoli) {
		if isZero(sec) {
			return sectorAsBefore
		}
		return sectorDamaged
	}
	if binary.LittleEndian.Uint32(sec[sectorData:]) != sectorTag(seed, off) {
		return sectorAsBefore
	}
	return sectorWritten
}

// tailDamage judges the frame at off of a formatSectors log of seed, which does not check
// out and has no frame of the log after it: damaged (at is the damaged sector's byte) when a
// sector of it does not check out at all; otherwise a write a crash cut short, whose sectors
// are each written or as they were before. A frame whose first sector was not written is
// the latter, whatever follows: its length is not known, and the write was never answered.
func tailDamage(b []byte, off int, seed uint32) (at int, damaged bool) {
	switch sectorAt(b, off, seed) {
	case sectorDamaged:
		return off, true
	case sectorAsBefore:
		return 0, false
	}
	size := int(binary.LittleEndian.Uint32(b[off:]))
	if size > maxFrame {
		return off, true // a first sector the writer never wrote, yet with the log's tag
	}
	sectors := (frameHeadSize + size + sectorData - 1) / sectorData
	for i := 1; i < sectors; i++ {
		if sectorAt(b, off+i*logSector, seed) == sectorDamaged {
			return off + i*logSector, true
		}
	}
	return 0, false
}

// readFrames reads a log's frames, up to the first that does not check out (none when the
// header does not).
func readFrames(b []byte) []logFrame {
	salt, format, ok := logHeader(b)
	if !ok {
		return nil
	}
	frames, _ := walkFrames(b, crc32.Checksum(salt[:], castagnoli), format)
	return frames
}

// walkFrames reads the frames written after a header whose salt has this seed, from the
// header's end up to the first that does not check out, and says where that one starts.
func walkFrames(b []byte, seed uint32, format logFormat) (frames []logFrame, stop int) {
	off := logHeaderSize
	if format != formatPacked {
		off = blocks(off)
	}
	return walkFramesFrom(b, off, seed, format)
}

// walkFramesFrom is walkFrames from off.
func walkFramesFrom(b []byte, off int, seed uint32, format logFormat) (frames []logFrame, stop int) {
	for {
		f, n, ok := frameAt(b, off, seed, format)
		if !ok {
			return frames, off
		}
		frames = append(frames, f)
		if format == formatPacked {
			off += n
		} else {
			off += blocks(n)
		}
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
	if !l.clean {
		if err := l.zeroFrames(); err != nil {
			return fmt.Errorf("start the log over: %w", err)
		}
		l.clean = true
	}
	h := l.blocks(logHeaderSize)
	magic := logMagic
	if l.format == formatBlocks {
		magic = logMagicBlocks
	}
	copy(h, magic[:])
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

// zeroFrames zeroes the file past its header block, durably: a log an earlier build wrote
// starts over in this format, whose torn writes must find only zeros or this format's
// sectors there. The old header stays until restartWith writes the new one: a crash in
// between leaves a log whose frames the database applied.
func (l *changeLog) zeroFrames() error {
	size, err := l.size()
	if err != nil {
		return err
	}
	zeros := alignedBlocks(min(blocks(int(size)), maxKeptBlock))
	for off := int64(blocks(logHeaderSize)); off < size; off += int64(len(zeros)) {
		if err := l.write(zeros[:min(len(zeros), blocks(int(size-off)))], off); err != nil {
			return fmt.Errorf("zero %s: %w", l.f.Name(), err)
		}
	}
	if err := syncData(l.f); err != nil {
		return fmt.Errorf("zero %s: %w", l.f.Name(), err)
	}
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

// sectors lays frame out in sectors at l.off (see changeLog): whole blocks from l.blocks,
// every sector sealed, those past the frame's end too (zeros with the tag).
func (l *changeLog) sectors(frame []byte) []byte {
	n := (len(frame) + sectorData - 1) / sectorData
	b := l.blocks(n * logSector)
	for i := range len(b) / logSector {
		sec := b[i*logSector : (i+1)*logSector]
		if i >= n { // zeros (l.blocks cleared them): their CRC-32C is the tag's after zeroData's
			binary.LittleEndian.PutUint32(sec[sectorData:], sectorTag(l.seed, int(l.off)+i*logSector))
			binary.LittleEndian.PutUint32(sec[sectorData+4:], crc32.Update(zeroData, castagnoli, sec[sectorData:sectorData+4]))
			continue
		}
		clear(sec[copy(sec[:sectorData], frame[i*sectorData:]):sectorData])
		sealSector(sec, l.seed, int(l.off)+i*logSector)
	}
	return b
}

// zeroData is the CRC-32C of a sector's data when it is zeros.
var zeroData = crc32.Checksum(make([]byte, sectorData), castagnoli)

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
	var b []byte
	if l.format == formatSectors {
		b = l.sectors(frame)
	} else {
		binary.LittleEndian.PutUint32(frame[4:], crc32.Update(l.seed, castagnoli, frame[8:]))
		b = l.blocks(len(frame))
		copy(b, frame)
	}
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
	var frames []logFrame
	err := l.readBackEach(n, func(f logFrame) error {
		frames = append(frames, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return frames, nil
}

// readBackEach is readBack calling fn with each frame in turn (its data is its own: fn may
// keep it), so that what fn is done with is garbage before the rest is read. An error of fn
// stops it.
func (l *changeLog) readBackEach(n int, fn func(logFrame) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	off := logHeaderSize
	if l.format != formatPacked {
		off = blocks(off)
	}
	read := 0
	var w readWindow
	for int64(off) < l.off {
		if err := l.readInto(&w, off, off+min(logSector, int(l.off)-off)); err != nil {
			return err
		}
		extent, ok := frameExtent(w.b[off-w.base:], l.format)
		if !ok || int64(off+extent) > l.off {
			break
		}
		if err := l.readInto(&w, off, off+extent); err != nil {
			return err
		}
		f, size, ok := frameIn(w.b, w.base, off, l.seed, l.format)
		if !ok {
			break
		}
		if l.format != formatSectors {
			f.data = bytes.Clone(f.data) // the window is read over
		}
		if read++; read > n {
			break
		}
		if err := fn(f); err != nil {
			return err
		}
		if l.format == formatPacked {
			off += size
		} else {
			off += blocks(size)
		}
	}
	if read != n || int64(off) != l.off {
		return fmt.Errorf("read back %s: %d frames up to byte %d, where %d were appended up to byte %d", l.f.Name(), read, off, n, l.off)
	}
	return nil
}

// readBackWindow is how much of the log readBack reads at once. From one checkpoint to the
// next the log holds mostly padding (each frame takes whole blocks: some 11 MB for 8,192
// records in small groups, against 3 MB of records); read whole, it was live heap beside the
// frames' data for as long as the checkpoint took, and a collection then set the garbage
// collector's goal (twice what is live) that much higher, for the RSS to follow.
const readBackWindow = 256 << 10

// readWindow is the part of the log readBack holds: the bytes from base on.
type readWindow struct {
	b    []byte
	base int
	buf  []byte // aligned, reused
}

// readInto makes w hold the log's bytes [from, to) (to at most l.off), reading a window
// from the block that holds from when it does not.
func (l *changeLog) readInto(w *readWindow, from, to int) error {
	if from >= w.base && to <= w.base+len(w.b) {
		return nil
	}
	base := from &^ (logBlock - 1)
	size := min(max(blocks(to)-base, readBackWindow), blocks(int(l.off))-base)
	if len(w.buf) < size {
		w.buf = alignedBlocks(size)
	}
	b := w.buf[:size]
	_, err := l.f.ReadAt(b, int64(base))
	if err != nil && l.direct && errors.Is(err, syscall.EINVAL) { // as write does
		if serr := setDirectIO(l.f, false); serr != nil {
			return errors.Join(err, serr)
		}
		l.direct = false
		_, err = l.f.ReadAt(b, int64(base))
	}
	if err != nil && !(errors.Is(err, io.EOF) && int64(base+size) > l.off) {
		return fmt.Errorf("read back %s: %w", l.f.Name(), err)
	}
	w.b, w.base = b, base
	return nil
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
