//go:build ignore

// entc.go configures ent's code generation; run it through `go generate ./...`
// from the repository root.
package main

import (
	"log"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
)

func main() {
	ex, err := entgql.NewExtension(
		entgql.WithConfigPath("./gqlgen.yml"),
		entgql.WithSchemaGenerator(),
		entgql.WithSchemaPath("./ent/ent.graphqls"),
		entgql.WithWhereInputs(true),
		entgql.WithRelaySpec(true),
	)
	if err != nil {
		log.Fatalf("creating entgql extension: %v", err)
	}
	err = entc.Generate("./ent/schema", &gen.Config{
		Package: "barberd/ent",
		Target:  "./ent",
		Features: []gen.Feature{
			gen.FeatureIntercept,
			gen.FeatureLock,
			gen.FeatureUpsert,
			gen.FeatureExecQuery,
			gen.FeatureModifier,
			gen.FeatureVersionedMigration,
		},
		Templates: []*gen.Template{
			gen.MustParse(gen.NewTemplate("pulid").ParseFiles("./ent/template/pulid.tmpl")),
		},
	}, entc.Extensions(ex))
	if err != nil {
		log.Fatalf("running ent codegen: %v", err)
	}
}
