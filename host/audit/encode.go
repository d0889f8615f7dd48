package audit

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/yagent/yagent/internal/jsonstr"
)

// timeLayout is RFC 3339 with nanoseconds always written, so the times of
// a file sort as text.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// line builds one JSON object by appending, without reflection: the write
// path of every call runs it.
type line struct {
	b     []byte
	first bool
}

func newLine(buf []byte, t time.Time, kind string) *line {
	l := &line{b: append(buf[:0], '{'), first: true}
	l.key("time")
	l.b = append(l.b, '"')
	l.b = appendTime(l.b, t.UTC())
	l.b = append(l.b, '"')
	l.str("kind", kind)
	return l
}

// appendTime appends t (UTC) as timeLayout does, digit by digit: the
// general formatter costs more than the rest of a line.
func appendTime(b []byte, t time.Time) []byte {
	year, month, day := t.Date()
	hour, min, sec := t.Clock()
	b = appendInt(b, year, 4)
	b = append(b, '-')
	b = appendInt(b, int(month), 2)
	b = append(b, '-')
	b = appendInt(b, day, 2)
	b = append(b, 'T')
	b = appendInt(b, hour, 2)
	b = append(b, ':')
	b = appendInt(b, min, 2)
	b = append(b, ':')
	b = appendInt(b, sec, 2)
	b = append(b, '.')
	b = appendInt(b, t.Nanosecond(), 9)
	return append(b, 'Z')
}

// appendInt appends v (not negative) zero-padded to width digits.
func appendInt(b []byte, v, width int) []byte {
	var d [20]byte
	i := len(d)
	for v > 0 || width > 0 {
		i--
		d[i] = byte('0' + v%10)
		v /= 10
		width--
	}
	return append(b, d[i:]...)
}

func (l *line) key(k string) {
	if !l.first {
		l.b = append(l.b, ',')
	}
	l.first = false
	l.b = jsonstr.Append(l.b, k)
	l.b = append(l.b, ':')
}

// str writes k unless v is empty.
func (l *line) str(k, v string) {
	if v == "" {
		return
	}
	l.key(k)
	l.b = jsonstr.Append(l.b, v)
}

func (l *line) bool(k string, v bool) {
	l.key(k)
	l.b = strconv.AppendBool(l.b, v)
}

func (l *line) int(k string, v int64) {
	l.key(k)
	l.b = strconv.AppendInt(l.b, v, 10)
}

func (l *line) float(k string, v float64) {
	l.key(k)
	l.b = strconv.AppendFloat(l.b, v, 'f', -1, 64)
}

// strs writes k unless vs is empty.
func (l *line) strs(k string, vs []string) {
	if len(vs) == 0 {
		return
	}
	l.key(k)
	l.b = append(l.b, '[')
	for i, v := range vs {
		if i > 0 {
			l.b = append(l.b, ',')
		}
		l.b = jsonstr.Append(l.b, v)
	}
	l.b = append(l.b, ']')
}

func (l *line) answer(approved bool, by, reason string) {
	l.key("answer")
	l.b = append(l.b, `{"approved":`...)
	l.b = strconv.AppendBool(l.b, approved)
	if by != "" {
		l.b = append(l.b, `,"by":`...)
		l.b = jsonstr.Append(l.b, by)
	}
	if reason != "" {
		l.b = append(l.b, `,"reason":`...)
		l.b = jsonstr.Append(l.b, reason)
	}
	l.b = append(l.b, '}')
}

func (l *line) end() []byte {
	return append(l.b, '}', '\n')
}

// appendScalar appends v when it is null, a boolean or a number, and
// reports whether it was one.
func appendScalar(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case float64:
		if x == float64(int64(x)) && x > -1e15 && x < 1e15 {
			return strconv.AppendInt(b, int64(x), 10), true
		}
		return strconv.AppendFloat(b, x, 'g', -1, 64), true
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case json.Number:
		return append(b, x...), true
	}
	return b, false
}
