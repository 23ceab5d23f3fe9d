package webhook

import (
	"barberd/ent"
	"barberd/graph/admin"
)

// share is how a worker shares its senders among accounts, so that one
// account's slow or failing endpoints cannot take them all: at most
// perAccount endpoints of one account at once (held counts those the worker
// holds now, by account), and accounts in turn, from the one after after
// (the account the worker's last claim ended with).
type share struct {
	perAccount int // 0: no cap
	held       map[string]int
	after      string
}

// claimCandidates is how many claimable endpoints a claim reads beyond
// its limit: enough for one account's every endpoint and then others.
const claimCandidates = admin.MaxWebhookEndpoints * 2

// pick takes up to limit of es (grouped by account, accounts in turn) one
// account at a time in turn, each up to its share.
func (s share) pick(es []*ent.WebhookEndpoint, limit int) []*ent.WebhookEndpoint {
	var accounts []string
	byAccount := map[string][]*ent.WebhookEndpoint{}
	for _, e := range es {
		if _, ok := byAccount[e.AccountID]; !ok {
			accounts = append(accounts, e.AccountID)
		}
		byAccount[e.AccountID] = append(byAccount[e.AccountID], e)
	}
	taken := map[string]int{}
	var out []*ent.WebhookEndpoint
	for more := true; more && len(out) < limit; {
		more = false
		for _, a := range accounts {
			left := byAccount[a]
			if len(out) == limit || len(left) == 0 ||
				(s.perAccount > 0 && s.held[a]+taken[a] >= s.perAccount) {
				continue
			}
			out = append(out, left[0])
			byAccount[a] = left[1:]
			taken[a]++
			more = true
		}
	}
	return out
}
