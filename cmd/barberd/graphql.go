package main

import (
	"net/http"

	"barberd/graph/gqlserver"
)

// writeGraphQLError answers a GraphQL request refused before execution (a
// bad API key, a rate limit, a body too large) in GraphQL's own response
// form (gqlserver.WriteError).
func writeGraphQLError(w http.ResponseWriter, err error) { gqlserver.WriteError(w, nil, err) }
