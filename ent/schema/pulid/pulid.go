// Package pulid makes the prefixed, lexically sortable identifiers every
// barberd entity uses ("apt_01J..."): opaque, not enumerable, and telling in
// a log line or support ticket which table they belong to.
package pulid

import (
	"crypto/rand"
	"strings"
	"sync"
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"
	"github.com/oklog/ulid/v2"
)

var (
	mu      sync.Mutex
	entropy = ulid.Monotonic(rand.Reader, 0)
)

// New returns a fresh identifier with the given prefix, e.g. New("apt").
func New(prefix string) string {
	mu.Lock()
	id := ulid.MustNew(ulid.Timestamp(time.Now()), entropy)
	mu.Unlock()
	return prefix + "_" + strings.ToLower(id.String())
}

// Before returns the least identifier with the given prefix made at t: the
// identifiers made before t sort below it (ULIDs sort by their time).
func Before(prefix string, t time.Time) string {
	var id ulid.ULID
	if err := id.SetTime(ulid.Timestamp(t)); err != nil {
		return prefix + "_"
	}
	return prefix + "_" + strings.ToLower(id.String())
}

// Prefix returns the type prefix of id ("apt" for "apt_01j..."), or "" when
// id has none.
func Prefix(id string) string {
	p, _, ok := strings.Cut(id, "_")
	if !ok {
		return ""
	}
	return p
}

// Mixin gives an entity a string id with the given prefix.
type Mixin struct {
	mixin.Schema
	prefix string
}

// WithPrefix returns the id mixin of an entity whose ids start with prefix.
func WithPrefix(prefix string) Mixin { return Mixin{prefix: prefix} }

// Fields provides the id field.
func (m Mixin) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").
			MaxLen(40).
			NotEmpty().
			Immutable().
			DefaultFunc(func() string { return New(m.prefix) }),
	}
}

// Annotation records an entity's id prefix for code generation.
type Annotation struct{ Prefix string }

// Name implements schema.Annotation.
func (Annotation) Name() string { return "PULID" }

// Annotations returns the prefix annotation.
func (m Mixin) Annotations() []schema.Annotation {
	return []schema.Annotation{Annotation{Prefix: m.prefix}}
}
