package main

import (
	"encoding/json"
	"net/http"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"barberd/graph"
)

// writeGraphQLError answers a GraphQL request refused before execution (a
// bad API key) in GraphQL's own response form.
func writeGraphQLError(w http.ResponseWriter, err error) {
	status := http.StatusUnauthorized
	if graph.ErrorCode(err) == graph.CodeUnavailable {
		status = http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": gqlerror.List{graph.AuthError(err)}})
}
