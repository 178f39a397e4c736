package mcp

// peekCall reads a JSON-RPC message's "method" and "params"."name" by
// scanning its bytes, without decoding the message: reroute needs only
// those two strings, and decoding every request's arguments and _meta
// (the 2026-07-28 leg names the client there, so the name fast path
// rarely applies) cost more than the rest of the adapter's own work.
//
// It answers only for plainly spelled messages, and says ok=false for the
// rest, which the caller decodes with encoding/json as mcp-go does: keys
// or the two values with an escape, a control character or a non-ASCII
// byte, a key that matches "method", "params" or "name" only
// case-insensitively (encoding/json would accept it), either key twice,
// a method or name that is not a string, params that is not an object,
// anything but whitespace after the message, or a message that is not an
// object. So whenever ok is true, the strings are the ones encoding/json
// would decode into mcp-go's request. A value the scan skips is not
// validated: a message encoding/json would refuse is answered by mcp-go
// either way.
func peekCall(body []byte) (method, name string, hasName, ok bool) {
	p := peeker{b: body}
	var hasMethod, hasParams bool
	ok = p.object(func(key string) bool {
		switch key {
		case "method":
			if hasMethod {
				return false
			}
			hasMethod = true
			var s bool
			method, s = p.plainString()
			return s
		case "params":
			if hasParams || !p.at('{') {
				return false
			}
			hasParams = true
			return p.object(func(key string) bool {
				if key != "name" {
					return !foldsTo(key, "name") && p.skip()
				}
				if hasName {
					return false
				}
				hasName = true
				var s bool
				name, s = p.plainString()
				return s
			})
		}
		return !foldsTo(key, "method") && !foldsTo(key, "params") && p.skip()
	})
	p.space()
	if !ok || p.i != len(p.b) {
		return "", "", false, false
	}
	return method, name, hasName, true
}

// foldsTo reports whether key differs from want but encoding/json would
// still match it to want's field. Keys are plain ASCII here, so ASCII case
// folding is all there is to it.
func foldsTo(key, want string) bool {
	if key == want || len(key) != len(want) {
		return false
	}
	for i := range len(key) {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != want[i] {
			return false
		}
	}
	return true
}

type peeker struct {
	b []byte
	i int
}

func (p *peeker) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

// at reports whether the next non-space byte is c, without consuming it.
func (p *peeker) at(c byte) bool {
	p.space()
	return p.i < len(p.b) && p.b[p.i] == c
}

// object reads an object whose members member reads: it is called with
// each key, the scan positioned at the key's value, and must consume it.
// Keys must be plain.
func (p *peeker) object(member func(key string) bool) bool {
	if !p.at('{') {
		return false
	}
	p.i++
	if p.at('}') {
		p.i++
		return true
	}
	for {
		p.space()
		key, ok := p.plainString()
		if !ok || !p.at(':') {
			return false
		}
		p.i++
		p.space()
		if !member(key) {
			return false
		}
		switch {
		case p.at(','):
			p.i++
		case p.at('}'):
			p.i++
			return true
		default:
			return false
		}
	}
}

// plainString reads a string of printable ASCII without escapes.
func (p *peeker) plainString() (string, bool) {
	if !p.at('"') {
		return "", false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			return string(p.b[start:j]), true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return "", false
		}
	}
	return "", false
}

// maxSkipDepth bounds the nesting skip follows; deeper messages go to
// encoding/json.
const maxSkipDepth = 64

// skip passes over one value: strings with their escapes, objects and
// arrays to their closing bracket, anything else to the next delimiter.
func (p *peeker) skip() bool {
	depth := 0
	for p.i < len(p.b) {
		switch c := p.b[p.i]; c {
		case '"':
			p.i++
			for p.i < len(p.b) && p.b[p.i] != '"' {
				if p.b[p.i] == '\\' {
					p.i++
				}
				p.i++
			}
			if p.i >= len(p.b) {
				return false
			}
			p.i++
		case '{', '[':
			depth++
			if depth > maxSkipDepth {
				return false
			}
			p.i++
			continue
		case '}', ']':
			if depth == 0 {
				return true // the end of the enclosing object
			}
			depth--
			p.i++
		case ',':
			if depth == 0 {
				return true
			}
			p.i++
			continue
		default:
			p.i++
			continue
		}
		if depth == 0 {
			return true
		}
	}
	return false
}
