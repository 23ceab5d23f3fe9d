// Package barberd is a booking integration service for barbershops. The code
// lives in the subpackages; this file only drives code generation.
package barberd

//go:generate go run -mod=mod ./ent/entc.go
//go:generate go run -mod=mod github.com/99designs/gqlgen generate
