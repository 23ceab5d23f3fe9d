// Package domain is the vocabulary every barberd operation and adapter
// shares: who is calling (Viewer and its scopes), what can go wrong (Error,
// its stable codes, and DomainError, the one classification of failures
// that REST, GraphQL, MCP and webhooks render), and the checks of input
// every operation applies (Problems and the Check functions).
//
// It depends only on the data (ent, model), the database's classification
// of failures (store) and the text and time rules (text, slots), so the
// operations of package graph and the packages beside it can all use it.
package domain
