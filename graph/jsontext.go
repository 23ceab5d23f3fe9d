package graph

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// JSON decoding hides the text problems TextProblem finds: encoding/json
// quietly turns invalid UTF-8, and an escaped half of a UTF-16 surrogate
// pair ("\ud800"), into U+FFFD. So every adapter that takes JSON (REST
// bodies, GraphQL variables, MCP tool arguments) reads the raw bytes with
// the two functions below before decoding them.

// JSONStringProblem says what makes the JSON string raw (quotes included)
// unfit to store as text, or "": invalid UTF-8 or a lone surrogate escape
// (MessageInvalidUTF8), an escaped NUL (MessageNUL).
func JSONStringProblem(raw []byte) string {
	if !utf8.Valid(raw) {
		return MessageInvalidUTF8
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		i++ // every escape is \ and one character, but \u and four hex digits
		if raw[i] != 'u' || i+4 >= len(raw) {
			continue
		}
		c := hexRune(raw[i+1 : i+5])
		i += 4
		switch {
		case c == 0:
			return MessageNUL
		case utf16.IsSurrogate(c):
			if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' &&
				utf16.DecodeRune(c, hexRune(raw[i+3:i+7])) != utf8.RuneError {
				i += 6 // a whole pair
				continue
			}
			return MessageInvalidUTF8
		}
	}
	return ""
}

// hexRune reads four hex digits.
func hexRune(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// JSONTextProblems finds, in the JSON text doc, the strings (keys too)
// that JSONStringProblem refuses, at most max of them, each named by its
// path under prefix ("client.name", "weekdays[2]", "variables.input.x").
// Malformed JSON yields what was found before the fault: decoding it
// fails on its own.
func JSONTextProblems(doc []byte, prefix string, max int) Problems {
	// Only a \u escape or a byte that is not UTF-8 can spell a problem.
	if utf8.Valid(doc) && !bytes.Contains(doc, []byte(`\u`)) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	// One level per open object (at a key, or at the value of key) or
	// array (at an index).
	type level struct {
		object, atKey bool
		key           string
		index         int
	}
	var stack []*level
	path := func() string {
		var b strings.Builder
		b.WriteString(prefix)
		for _, l := range stack {
			switch {
			case !l.object:
				b.WriteString("[" + strconv.Itoa(l.index) + "]")
			case b.Len() > 0:
				b.WriteString("." + l.key)
			default:
				b.WriteString(l.key)
			}
		}
		return b.String()
	}
	var p Problems
	for len(p) < max {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return p
		}
		// The token's own bytes, with the separators before it (which
		// hold no escape and are UTF-8).
		raw := doc[start:dec.InputOffset()]
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if key, ok := tok.(string); ok && top != nil && top.atKey {
			top.key, top.atKey = key, false
			if msg := JSONStringProblem(raw); msg != "" {
				p.Add(path(), "%s", msg)
			}
			continue
		}
		switch tok.(type) {
		case string:
			if msg := JSONStringProblem(raw); msg != "" {
				p.Add(path(), "%s", msg)
			}
		case json.Delim:
			switch tok {
			case json.Delim('{'):
				stack = append(stack, &level{object: true, atKey: true})
				continue
			case json.Delim('['):
				stack = append(stack, &level{})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		}
		// A value ended: its object is at a key again, its array at the
		// next index.
		if len(stack) > 0 {
			if top = stack[len(stack)-1]; top.object {
				top.atKey = true
			} else {
				top.index++
			}
		}
	}
	return p
}
