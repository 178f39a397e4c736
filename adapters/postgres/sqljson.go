package postgres

import (
	"encoding/json"
	"slices"
	"unicode/utf8"
	"unsafe"

	"github.com/jackc/pgx/v5/pgtype"
)

// The SQL runner hands each cell over as the JSON text encoding/json
// would write for its mapped value (cellValue), written straight from the
// bytes PostgreSQL sent: a 100-row result then costs a handful of
// allocations instead of one boxed value per cell, and the tool writes
// the cells into its answer as they are.

// jsonArena writes cells' JSON one after the other into one buffer, which
// grows as append grows a slice: a cell returned before it grew keeps the
// bytes it was written in, which are the same, and the whole buffer holds
// no pointer for the collector to scan. A written cell is never written
// again, and it is returned with its capacity cut to its length, so
// appending to it copies rather than overwriting the next.
type jsonArena struct{ buf []byte }

// reserve makes room for n more bytes.
func (a *jsonArena) reserve(n int) {
	if n > cap(a.buf)-len(a.buf) {
		// Small first, so a one-row answer stays small.
		a.buf = slices.Grow(a.buf, max(n, 512))
	}
}

// cut returns the bytes written since start as a cell.
func (a *jsonArena) cut(start int) json.RawMessage {
	return json.RawMessage(a.buf[start:len(a.buf):len(a.buf)])
}

// raw writes b, already JSON, as a cell.
func (a *jsonArena) raw(b string) json.RawMessage {
	a.reserve(len(b))
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.cut(start)
}

// value writes the JSON of a JSON-ready value (see ports.SQLResult) as a
// cell.
func (a *jsonArena) value(v any) json.RawMessage {
	switch v := v.(type) {
	case nil:
		return a.raw("null")
	case bool:
		if v {
			return a.raw("true")
		}
		return a.raw("false")
	case json.Number:
		return a.raw(string(v))
	case string:
		return a.str(v)
	}
	// Arrays and decoded json: rarer, and encoding/json writes them.
	b, err := json.Marshal(v)
	if err != nil {
		// Not a JSON-ready value: the mapping never makes one.
		return a.raw("null")
	}
	return a.raw(unsafe.String(unsafe.SliceData(b), len(b)))
}

// str writes s quoted as a cell.
func (a *jsonArena) str(s string) json.RawMessage {
	a.reserve(len(s) + 2) // exact unless something needs escaping
	start := len(a.buf)
	a.buf = appendJSONString(a.buf, s)
	return a.cut(start)
}

// cell maps one value in PostgreSQL's text format exactly as cellValue
// does (same value, size and cut) and returns its JSON. The commonest
// types are written from raw without going through an interface value.
func (a *jsonArena) cell(oid uint32, raw []byte, maxBytes int) (cell json.RawMessage, size int, cut bool) {
	if raw == nil || len(raw) > mapLimit(maxBytes) || !utf8.Valid(raw) {
		v, n, c := cellValue(oid, raw, maxBytes)
		return a.value(v), n, c
	}
	// text aliases pgx's read buffer, which the next row overwrites: it is
	// only read here, never kept (every kept string below is a copy, the
	// JSON written into the arena).
	text := unsafe.String(unsafe.SliceData(raw), len(raw))
	if len(raw) <= maxBytes {
		switch oid {
		case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID, pgtype.OIDOID,
			pgtype.Float4OID, pgtype.Float8OID, pgtype.NumericOID:
			if isJSONNumber(text) {
				return a.raw(text), len(raw), false
			}
		case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID, pgtype.UUIDOID:
			return a.str(text), len(raw), false
		}
	}
	v, n, c := textCell(oid, text, maxBytes)
	return a.value(v), n, c
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes a string (with
// its default HTML escaping).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
