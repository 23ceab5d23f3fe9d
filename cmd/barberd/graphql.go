package main

import (
	"encoding/json"
	"net/http"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"barberd/graph"
	"barberd/rest"
)

// writeGraphQLError answers a GraphQL request refused before execution (a
// bad API key, or the key's rate limit) in GraphQL's own response form.
func writeGraphQLError(w http.ResponseWriter, err error) {
	status := http.StatusUnauthorized
	switch graph.ErrorCode(err) {
	case graph.CodeUnavailable:
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "2")
	case graph.CodeCanceled:
		status = 499 // the client went away: nobody reads this
	case rest.CodeRateLimited:
		status = http.StatusTooManyRequests
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": gqlerror.List{graph.AuthError(err)}})
}
