// Package text says which text barberd can store: PostgreSQL refuses a NUL
// and invalid UTF-8 (and SQLite would store them as given), so every
// adapter refuses both before either database sees them.
//
// JSON decoding hides these problems: encoding/json quietly turns invalid
// UTF-8, and an escaped half of a UTF-16 surrogate pair ("\ud800"), into
// U+FFFD. So every adapter that takes JSON (REST bodies, GraphQL
// variables, MCP tool arguments) reads the raw bytes with JSONStringProblem
// or JSONProblems before decoding them.
package text

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Messages of text that cannot be stored.
const (
	InvalidUTF8 = "must be valid UTF-8 text"
	NUL         = "must not contain the NUL character (U+0000)"
)

// Problem says what makes s unfit to store as text, or "".
func Problem(s string) string {
	switch {
	case strings.IndexByte(s, 0) >= 0:
		return NUL
	case !utf8.ValidString(s):
		return InvalidUTF8
	}
	return ""
}

// JSONStringProblem says what makes the JSON string raw (quotes included)
// unfit to store as text, or "": invalid UTF-8 or a lone surrogate escape
// (InvalidUTF8), an escaped NUL (NUL).
func JSONStringProblem(raw []byte) string {
	if !utf8.Valid(raw) {
		return InvalidUTF8
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
			return NUL
		case utf16.IsSurrogate(c):
			if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' &&
				utf16.DecodeRune(c, hexRune(raw[i+3:i+7])) != utf8.RuneError {
				i += 6 // a whole pair
				continue
			}
			return InvalidUTF8
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

// FieldProblem is a string of a JSON text that cannot be stored: its path
// and what is wrong with it (InvalidUTF8 or NUL).
type FieldProblem struct{ Field, Message string }

// JSONProblems finds, in the JSON text doc, the strings (keys too)
// that JSONStringProblem refuses, at most max of them, each named by its
// path under prefix ("client.name", "weekdays[2]", "variables.input.x").
// Malformed JSON yields what was found before the fault: decoding it
// fails on its own.
func JSONProblems(doc []byte, prefix string, max int) []FieldProblem {
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
	var p []FieldProblem
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
				p = append(p, FieldProblem{path(), msg})
			}
			continue
		}
		switch tok.(type) {
		case string:
			if msg := JSONStringProblem(raw); msg != "" {
				p = append(p, FieldProblem{path(), msg})
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
