package gqlserver_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"barberd/graph/domain"
	"barberd/graph/gqlserver"
)

// TestWriteError: a request refused before execution gets GraphQL's form,
// its code's HTTP status, Retry-After when unavailable, and nothing
// internal.
func TestWriteError(t *testing.T) {
	for _, c := range []struct {
		err        error
		status     int
		retryAfter string
		body       string
	}{
		{domain.Errorf(domain.CodeInvalidAPIKey, "The API key is not valid."), http.StatusUnauthorized, "",
			`{"errors":[{"message":"The API key is not valid.","extensions":{"code":"invalid_api_key"}}]}`},
		{domain.Errorf(domain.CodeUnavailable, "The booking database is busy; try again shortly."), http.StatusServiceUnavailable, "2",
			`{"errors":[{"message":"The booking database is busy; try again shortly.","extensions":{"code":"unavailable"}}]}`},
		{errors.New("a secret cause"), http.StatusInternalServerError, "",
			`{"errors":[{"message":"Something went wrong on our side.","extensions":{"code":"internal_error"}}]}`},
	} {
		rec := httptest.NewRecorder()
		gqlserver.WriteError(rec, httptest.NewRequest("POST", "/graphql", nil), c.err)
		if rec.Code != c.status || rec.Header().Get("Retry-After") != c.retryAfter ||
			rec.Header().Get("Content-Type") != "application/json" || rec.Body.String() != c.body+"\n" {
			t.Errorf("%v: status %d, Retry-After %q, Content-Type %q, body %s; want %d, %q, application/json, %s",
				c.err, rec.Code, rec.Header().Get("Retry-After"), rec.Header().Get("Content-Type"), rec.Body, c.status, c.retryAfter, c.body)
		}
	}
}
