package graph

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"barberd/ent"
	"barberd/ent/apikey"
	"barberd/ent/schema/tenant"
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
	return hex.EncodeToString(sum[:])
}

func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return secretPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// Authenticate returns the viewer of the API key with the given secret.
// Errors: missing_api_key, invalid_api_key (unknown or revoked), unavailable.
func (r *Resolver) Authenticate(ctx context.Context, secret string) (*Viewer, error) {
	if secret == "" {
		return nil, Errorf(CodeMissingAPIKey, "Send your API key in header X-Service-Api-Key.")
	}
	sys := tenant.System(ctx)
	k, err := r.DB.APIKey.Query().Where(apikey.SecretHash(hashSecret(secret))).Only(sys)
	if ent.IsNotFound(err) {
		return nil, Errorf(CodeInvalidAPIKey, "The API key is not valid.")
	}
	if err != nil {
		return nil, r.dbError(err)
	}
	if k.RevokedAt != nil {
		return nil, Errorf(CodeInvalidAPIKey, "The API key has been revoked.")
	}
	now := r.now()
	if k.LastUsedAt == nil || now.Sub(*k.LastUsedAt) > touchEvery {
		// Best effort: a failed touch must not fail the request.
		if err := r.DB.APIKey.Update().Where(apikey.ID(k.ID)).SetLastUsedAt(now).Exec(sys); err != nil {
			r.Log.WarnContext(ctx, "recording key use", "key_id", k.ID, "err", err)
		}
	}
	return &Viewer{
		AccountID:    k.AccountID,
		KeyID:        k.ID,
		KeyName:      k.Name,
		KeyPrefix:    k.Prefix,
		Scopes:       k.Scopes,
		KeyCreatedAt: k.CreatedAt,
	}, nil
}

// CreateAPIKey makes a new key for an account and returns its secret, which
// is stored only as a hash and never shown again.
// Errors: validation_failed (name, scopes), not_found (account).
func (r *Resolver) CreateAPIKey(ctx context.Context, accountID, name string, scopes []string) (string, *ent.APIKey, error) {
	var p Problems
	name = strings.TrimSpace(name)
	if name == "" || len([]rune(name)) > 200 {
		p.Add("name", "must be 1 to 200 characters")
	}
	if len(scopes) == 0 {
		p.Add("scopes", "must name at least one scope of: %s", strings.Join(AllScopes, ", "))
	}
	for _, s := range scopes {
		if !slices.Contains(AllScopes, s) {
			p.Add("scopes", "unknown scope %q; known scopes: %s", s, strings.Join(AllScopes, ", "))
		}
	}
	if err := p.Err(); err != nil {
		return "", nil, err
	}
	ctx = tenant.WithAccount(ctx, accountID)
	if _, err := r.DB.Account.Get(ctx, accountID); err != nil {
		if ent.IsNotFound(err) {
			return "", nil, Errorf(CodeNotFound, "No account %q.", accountID)
		}
		return "", nil, r.dbError(err)
	}
	secret := newSecret()
	k, err := r.DB.APIKey.Create().
		SetAccountID(accountID).
		SetName(name).
		SetPrefix(secret[:shownPrefixLen]).
		SetSecretHash(hashSecret(secret)).
		SetScopes(slices.Compact(slices.Sorted(slices.Values(scopes)))).
		Save(ctx)
	if err != nil {
		return "", nil, r.dbError(err)
	}
	return secret, k, nil
}
