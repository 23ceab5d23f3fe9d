package graph

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"

	"barberd/ent"
	"barberd/ent/account"
	"barberd/ent/apikey"
	"barberd/ent/schema/tenant"
	"barberd/graph/admin"
	"barberd/graph/domain"
	"barberd/graph/fresh"
)

// secretPrefix starts every key, so a leaked key is easy to recognise in
// code, logs and secret scanners.
const secretPrefix = "bk_"

// shownPrefixLen is how much of the secret is kept in clear, to tell keys apart.
const shownPrefixLen = 11

// touchEvery bounds how often last_used_at is written for a busy key.
const touchEvery = time.Minute

func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	return string(h[:]) // one allocation: every request with a key hashes it
}

// secretLen is the length of every secret newSecret makes: the prefix and
// 32 random bytes in unpadded base32.
const secretLen = len(secretPrefix) + 52

// wellFormedSecret reports whether s could be a secret newSecret made.
// Anything else is refused without asking the database.
func wellFormedSecret(s string) bool {
	if len(s) != secretLen || !strings.HasPrefix(s, secretPrefix) {
		return false
	}
	for _, c := range []byte(s[len(secretPrefix):]) {
		if (c < 'a' || c > 'z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

// unknownKeyTTL is how long a secret the database did not know is refused
// without asking it again. A secret is 256 random bits, so one that is
// unknown now will not be issued later; the bound only keeps the memory of
// a flood of wrong keys short-lived.
const unknownKeyTTL = time.Minute

// invalidAPIKey refuses a key that is not one of ours, made only when a
// key is refused: the check of good keys is a hot path.
func invalidAPIKey() error {
	return domain.Errorf(domain.CodeInvalidAPIKey, "The API key is not valid.")
}

func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return secretPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// Authenticate returns the viewer of the API key with the given secret, from
// the key cache while its account's config version is current (package
// fresh); a malformed secret, or one recently unknown, costs no query.
// Errors: missing_api_key, invalid_api_key (unknown or revoked), unavailable.
func (r *Resolver) Authenticate(ctx context.Context, secret string) (*domain.Viewer, error) {
	if secret == "" {
		return nil, domain.Errorf(domain.CodeMissingAPIKey, "Send your API key in header X-Service-Api-Key.")
	}
	if !wellFormedSecret(secret) {
		return nil, invalidAPIKey()
	}
	hash := hashSecret(secret)
	c := r.cache
	if at, ok := c.unknownKeys.Get(hash); ok && r.now().Sub(at) < unknownKeyTTL {
		c.metrics.CacheLookup("unknown_api_key", true)
		return nil, invalidAPIKey()
	}
	if e, ok := c.keys.Get(hash); ok {
		got, err := c.fence.Read(ctx, e.viewer.AccountID, nil)
		if err != nil {
			// The database is what failed; asking it again would only
			// double the wait.
			return nil, err
		}
		hit := got.Same(e.viewer.AccountID, e.viewer.ConfigVersion, nil, nil)
		c.metrics.CacheLookup("api_key", hit)
		if hit {
			r.touch(ctx, e)
			v := e.viewer
			return &v, nil
		}
	} else {
		c.metrics.CacheLookup("api_key", false)
	}
	sys := tenant.System(ctx)
	// One statement, so the key and the version describe the same moment.
	k, err := r.cfg.DB.APIKey.Query().Where(apikey.SecretHash(hash)).Modify(func(s *sql.Selector) {
		a := sql.Table(account.Table)
		s.Join(a).On(s.C(apikey.FieldAccountID), a.C(account.FieldID)).
			AppendSelectAs(a.C(account.FieldConfigVersion), account.FieldConfigVersion)
	}).Only(sys)
	if ent.IsNotFound(err) {
		c.unknownKeys.Put(hash, r.now())
		return nil, invalidAPIKey()
	}
	if err != nil {
		return nil, err
	}
	if k.RevokedAt != nil {
		c.keys.Drop(hash)
		return nil, domain.Errorf(domain.CodeInvalidAPIKey, "The API key has been revoked.")
	}
	config, err := k.Value(account.FieldConfigVersion)
	if err != nil {
		return nil, err
	}
	version, versioned := asInt64(config)
	e := &keyEntry{viewer: domain.Viewer{
		AccountID:      k.AccountID,
		KeyID:          k.ID,
		KeyName:        k.Name,
		KeyPrefix:      k.Prefix,
		Scopes:         k.Scopes,
		KeyCreatedAt:   k.CreatedAt,
		MaxActiveHolds: k.MaxActiveHolds,
		ConfigVersion:  version,
		Versioned:      versioned,
	}}
	if k.LastUsedAt != nil {
		e.lastUsed.Store(k.LastUsedAt.UnixNano())
	}
	if versioned {
		c.keys.Put(hash, e)
	}
	r.touch(ctx, e)
	v := e.viewer
	return &v, nil
}

// touch records that a key was used, at most once per touchEvery per
// process. Best effort: a failed touch must not fail the request.
func (r *Resolver) touch(ctx context.Context, e *keyEntry) {
	now := r.now()
	last := e.lastUsed.Load()
	if now.Sub(time.Unix(0, last)) <= touchEvery || !e.lastUsed.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	err := r.cfg.DB.APIKey.Update().Where(apikey.ID(e.viewer.KeyID)).SetLastUsedAt(now).Exec(tenant.System(ctx))
	if err != nil {
		r.cfg.Log.WarnContext(ctx, "recording key use", "key_id", e.viewer.KeyID, "err", err)
	}
}

// asInt64 reads an integer column selected outside ent's fields, which the
// drivers return as int64 (or, for some types, as text).
func asInt64(v any) (int64, bool) {
	var s string
	switch n := v.(type) {
	case int64:
		return n, true
	case []byte:
		s = string(n)
	case string:
		s = n
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return i, err == nil
}

// CreateAPIKey makes a new key for an account, with the server's default
// hold cap, and returns its secret, which is stored only as a hash and never
// shown again. Errors: validation_failed (name, scopes), not_found (account).
func (r *Resolver) CreateAPIKey(ctx context.Context, accountID, name string, scopes []string) (string, *ent.APIKey, error) {
	return r.CreateAPIKeyWithCap(ctx, accountID, name, scopes, nil)
}

// CreateAPIKeyWithCap is CreateAPIKey with the key's own hold cap
// (maxHolds; nil: the server's default, 0: no cap).
// Errors: validation_failed (name, scopes, maxActiveHolds), not_found (account).
func (r *Resolver) CreateAPIKeyWithCap(ctx context.Context, accountID, name string, scopes []string, maxHolds *int) (string, *ent.APIKey, error) {
	var p domain.Problems
	name = strings.TrimSpace(name)
	admin.CheckKeyFields(&p, &name, maxHolds)
	if len(scopes) == 0 {
		p.Add("scopes", "must name at least one scope of: %s", strings.Join(domain.AllScopes, ", "))
	}
	for _, s := range scopes {
		if !slices.Contains(domain.AllScopes, s) {
			p.Add("scopes", "unknown scope %q; known scopes: %s", s, strings.Join(domain.AllScopes, ", "))
		}
	}
	if err := p.Err(); err != nil {
		return "", nil, err
	}
	ctx = tenant.WithAccount(ctx, accountID)
	if _, err := r.cfg.DB.Account.Get(ctx, accountID); err != nil {
		return "", nil, domain.NotFound(err, domain.CodeNotFound, "account", accountID)
	}
	secret, k, err := insertAPIKey(ctx, r.cfg.DB.Client, accountID, name, scopes, maxHolds)
	if err != nil {
		return "", nil, err
	}
	fresh.Committed(ctx) // one statement, outside inTx
	return secret, k, nil
}

// insertAPIKey writes a checked key through db (the database or a
// transaction's client) and returns its secret.
func insertAPIKey(ctx context.Context, db *ent.Client, accountID, name string, scopes []string, maxHolds *int) (string, *ent.APIKey, error) {
	secret := newSecret()
	k, err := db.APIKey.Create().
		SetAccountID(accountID).
		SetName(name).
		SetPrefix(secret[:shownPrefixLen]).
		SetSecretHash(hashSecret(secret)).
		SetScopes(slices.Compact(slices.Sorted(slices.Values(scopes)))).
		SetNillableMaxActiveHolds(maxHolds).
		Save(tenant.WithAccount(ctx, accountID))
	return secret, k, err
}
