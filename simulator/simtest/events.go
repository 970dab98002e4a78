package simtest

import (
	"bufio"
	"strings"
)

// NextEvent reads a server-sent event stream (the dashboard's /ui/stream) up to its next
// event and returns the event's name and data; ok is false when the stream ends first.
// Comments (": ping") and blocks with neither a name nor data (the opening "retry:") are
// skipped.
func NextEvent(sc *bufio.Scanner) (name, data string, ok bool) {
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if name != "" || data != "" {
				return name, data, true
			}
			continue
		}
		if v, found := strings.CutPrefix(line, "event: "); found {
			name = v
		} else if v, found := strings.CutPrefix(line, "data: "); found {
			if data != "" {
				data += "\n"
			}
			data += v
		}
	}
	return "", "", false
}
