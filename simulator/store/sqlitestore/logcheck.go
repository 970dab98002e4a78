package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// The log is trusted only when it is intact. From schema version 9 on, the database records
// the log it expects whenever the log starts over (a checkpoint, an open, a failed append),
// in the transaction before the new header is written: its salt, the salt before (a crash
// between that transaction and the header leaves the old header, whose frames the
// transaction applied), and the file's size. Opening checks the log against that record
// (checkLog):
//
//   - a missing log, one shorter than the recorded size, or one whose header holds another
//     salt was deleted, cut or started over by something else: refused;
//   - a header that does not check out (its magic, salt or checksum damaged, the file zeroed
//     or overwritten) is looked past: frames that check out against the recorded salt are
//     the expected log's and are replayed; none at all is refused (the frames it held, if any,
//     are gone);
//   - a frame that does not check out, followed by frames of the same log, is damage in the
//     middle of what was acknowledged: refused; the writer writes a frame only once the one
//     before it is synced;
//   - a frame that does not check out and nothing of the same log after it is either the tail
//     a crash cut short (power lost during the write, which was never answered): its sectors
//     are each written or as they were, and the frames before it are replayed, silently; or
//     damage to the last frame: a sector of it does not check out at all (tailDamage), refused
//     like damage in the middle. A log of an earlier format (one checksum per frame) cannot
//     tell the two apart and replays up to it; so can no format a log cut at a frame's
//     boundary past the recorded size: both lose that frame.
//
// A refusal names the file, the damage and the ways out: restore the database and its log
// from a copy, or open with Options.AcceptLogLoss (lifecyclesim --accept-log-loss), which
// replays the frames before the damage and reports what it dropped (Store.LogLoss).

// logRecordKey is the meta row of the record.
const logRecordKey = "log_record"

// logRecord is what the database records of its log.
type logRecord struct {
	salt, prev [8]byte
	size       int64
	// closed is set by a Close that checkpointed everything: the log holds nothing to replay
	// (a copy of the database alone, as the README's backup advice takes, opens without it).
	closed bool
}

// readLogRecord reads the record; ok is false for a database without one (a version before 9,
// or a new file).
func (s *Store) readLogRecord(ctx context.Context) (r logRecord, ok bool, err error) {
	var v string
	err = s.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", logRecordKey).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("read the log's record: %w", err)
	}
	parts := strings.Fields(v)
	var salt, prev []byte
	if len(parts) == 4 {
		salt, err = hex.DecodeString(parts[0])
		if err == nil {
			prev, err = hex.DecodeString(parts[1])
		}
		if err == nil {
			r.size, err = strconv.ParseInt(parts[2], 10, 64)
		}
		r.closed = parts[3] == "closed"
	}
	if len(parts) != 4 || err != nil || len(salt) != 8 || len(prev) != 8 {
		return r, false, fmt.Errorf("the log's record %q does not read as salt, previous salt, size and state", v)
	}
	r.salt, r.prev = [8]byte(salt), [8]byte(prev)
	return r, true, nil
}

// setLogRecord records, in tx, the log that is about to start over with salt: prev is the
// salt its header holds until then, size its file's size.
func setLogRecord(ctx context.Context, tx *sql.Tx, r logRecord) error {
	state := "open"
	if r.closed {
		state = "closed"
	}
	v := fmt.Sprintf("%x %x %d %s", r.salt, r.prev, r.size, state)
	_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, logRecordKey, v)
	if err != nil {
		return fmt.Errorf("record the log: %w", err)
	}
	return nil
}

// closeLogRecord records that the log holds nothing to replay: Close checkpointed everything.
func (s *Store) closeLogRecord(ctx context.Context) error {
	if s.log.f == nil || !s.logRecorded {
		return nil
	}
	r := s.logRec
	r.closed = true
	return s.tx(ctx, func(tx *sql.Tx) error { return setLogRecord(ctx, tx, r) })
}

// nextLogRecord is the record of the log starting over with a new salt from now.
func (s *Store) nextLogRecord() (logRecord, error) {
	salt, err := newSalt()
	if err != nil {
		return logRecord{}, err
	}
	size, err := s.log.size()
	if err != nil {
		return logRecord{}, fmt.Errorf("size of the log: %w", err)
	}
	return logRecord{salt: salt, prev: s.log.salt, size: size}, nil
}

// logCheck is checkLog's answer.
type logCheck struct {
	// frames are the frames to replay (those of the expected log, before any damage).
	frames []logFrame
	// damage says what is wrong, "" when the log can be trusted.
	damage string
	// dropped are the intact frames after the damage, which are not replayed; unknown is set
	// when what the damage took cannot be counted (the frames are gone).
	dropped []logFrame
	unknown bool
	// headerRepaired is set when the header did not check out but the frames did, found by
	// salt.
	headerRepaired bool
	salt           [8]byte
}

// checkLog judges the log b (exists false: the file was missing) against the database's
// record of it; applied is the last row a checkpoint applied.
func checkLog(b []byte, exists bool, rec logRecord, applied uint64) logCheck {
	if rec.closed {
		return logCheck{} // nothing to replay, whatever the file holds
	}
	if !exists {
		return logCheck{damage: "is missing (deleted, or the database was copied without it or opened through a hard link) and the database expects one", unknown: true}
	}
	seed := func(salt [8]byte) uint32 { return crc32.Checksum(salt[:], castagnoli) }
	var c logCheck
	var frames []logFrame
	var stop int
	var s uint32
	// current is set when the frames are the expected log's, which the database has not
	// applied: the only log whose last frame may hold acknowledged changes.
	current := false
	salt, format, ok := logHeader(b)
	switch {
	case ok && salt == rec.salt:
		current = true
		s = seed(rec.salt)
		frames, stop = walkFrames(b, s, format)
	case ok && salt == rec.prev:
		// A crash after the checkpoint that recorded rec and before the header: its frames
		// were applied; any other is damage.
		s = seed(rec.prev)
		frames, stop = walkFrames(b, s, format)
		for _, f := range frames {
			if f.row > applied {
				return logCheck{damage: fmt.Sprintf("holds row %d of a log the database applied up to row %d", f.row, applied), unknown: true}
			}
		}
		frames = nil
	case ok:
		return logCheck{damage: fmt.Sprintf("was started over by something else: its header holds salt %x, the database expects %x", salt, rec.salt), unknown: true}
	default:
		// The header is damaged: the frames are found by the salts the database recorded, in
		// this format or the one before.
	find:
		for _, salt := range [][8]byte{rec.salt, rec.prev} {
			for _, format = range []logFormat{formatSectors, formatBlocks} {
				s, c.salt = seed(salt), salt
				if frames, stop = walkFrames(b, s, format); len(frames) > 0 {
					break find
				}
			}
		}
		if len(frames) == 0 {
			what := "its header is damaged"
			switch {
			case isZero(b):
				what = "it is all zeros"
			case len(b) < logHeaderSize:
				what = fmt.Sprintf("it is %d bytes, shorter than its header", len(b))
			}
			return logCheck{damage: what + " and no frame of the log the database expects is in it", unknown: true}
		}
		if frames[0].row <= applied {
			// Frames of the previous log (a crash between a checkpoint and the header): applied.
			for _, f := range frames {
				if f.row > applied {
					return logCheck{damage: fmt.Sprintf("holds row %d of a log the database applied up to row %d", f.row, applied), unknown: true}
				}
			}
			frames = nil
		}
		current = c.salt == rec.salt
		c.headerRepaired = true
	}
	// The rows follow each other from the first the checkpoint did not apply.
	next := applied + 1
	for i, f := range frames {
		if f.row != next {
			return logCheck{frames: frames[:i], damage: fmt.Sprintf("lacks row %d (the next frame holds row %d)", next, f.row), dropped: frames[i:]}
		}
		next++
	}
	c.frames = frames
	// After the last frame that checks out: frames of the same log further on mean the one at
	// stop was written and synced before them, so acknowledged.
	if format != formatPacked {
		for off := blocks(stop + 1); off < len(b); off += logBlock {
			if f, _, ok := frameAt(b, off, s, format); ok && f.row >= next {
				after, _ := walkFramesFrom(b, off, s, format)
				c.dropped = after
				c.damage = fmt.Sprintf("has a damaged frame at byte %d (row %d) and %d intact frames of the same log after it (rows %d to %d)",
					stop, next, len(after), after[0].row, after[len(after)-1].row)
				return c
			}
		}
	}
	// Nothing of the log after it: a torn write, or the last frame damaged.
	if current && format == formatSectors {
		if at, damaged := tailDamage(b, stop, s); damaged {
			c.damage = fmt.Sprintf("has a damaged frame at byte %d (row %d), the last one: its sector at byte %d does not check out, "+
				"which a write cut short by a crash never leaves (a disk writes a sector whole or not at all)", stop, next, at)
			return c
		}
	}
	if int64(len(b)) < rec.size {
		c.damage = fmt.Sprintf("is %d bytes, shorter than the %d it had when it last started over: it was cut", len(b), rec.size)
		c.unknown = true
	}
	return c
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return len(b) > 0
}

// LogDamageError is Open's answer for a log that cannot be trusted: acknowledged changes may
// be in what is damaged or gone.
type LogDamageError struct {
	Path   string // the log's file
	Damage string // what is wrong with it
	// Applied is the last row a checkpoint applied; Replayable the frames before the damage,
	// Dropped the intact frames after it, and Changes the changes they hold; Unknown is set
	// when what was lost cannot be counted.
	Applied, Replayable, Dropped, Changes int
	Unknown                               bool
}

func (e *LogDamageError) Error() string {
	return fmt.Sprintf("the log %s %s, so changes that were acknowledged may be lost; "+
		"restore the database and its log (%s) from a copy taken together, or start with --accept-log-loss "+
		"to open it as the last checkpoint left it plus the %d intact frames before the damage (%s)",
		e.Path, e.Damage, e.Path, e.Replayable, e.loss())
}

// loss says what accepting the loss drops.
func (e *LogDamageError) loss() string {
	if e.Unknown {
		return fmt.Sprintf("what was written after row %d cannot be counted", e.Applied+e.Replayable)
	}
	if e.Dropped == 0 {
		return "dropping the damaged frame, the last one, whose object writes cannot be counted"
	}
	return fmt.Sprintf("dropping the damaged frame and %d intact frames after it, which hold %d object writes", e.Dropped, e.Changes)
}

// countChanges counts the changes (records) frames hold.
func countChanges(frames []logFrame) int {
	var n recordCounter
	for _, f := range frames {
		_ = scanRecords(f.data, &n)
	}
	return int(n)
}

// recordCounter counts the writes and resets scanRecords reads.
type recordCounter int

func (n *recordCounter) resetAll()          { *n++ }
func (n *recordCounter) write(*recordWrite) { *n++ }
func (n *recordCounter) key(recordKey)      {}
