package main

import (
	"encoding/json"
	"net/http"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"barberd/graph"
	"barberd/graph/gqlserver"
	"barberd/rest"
)

// writeGraphQLError answers a GraphQL request refused before execution (a
// bad API key, a rate limit, a body too large) in GraphQL's own response
// form, with the status the REST table gives its code.
func writeGraphQLError(w http.ResponseWriter, err error) {
	status := rest.Status(graph.ErrorCode(err))
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "2")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": gqlerror.List{gqlserver.AuthError(err)}})
}
