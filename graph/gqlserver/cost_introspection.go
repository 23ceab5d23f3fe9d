package gqlserver

import (
	"github.com/vektah/gqlparser/v2/ast"
)

// scope is what a selection set selects on, for the cost: data, or an
// introspection object, and over how much of the schema.
type scope struct {
	in introspected
	// wrap is, on a __Type, how many more ofType levels may be non-null.
	wrap int
}

// introspected is the kind of introspection object a selection set is
// on. "every" scopes select on all the schema's types (fields, directives)
// together, so the lists under them count by their average length: their
// lengths sum to the schema's totals.
type introspected uint8

const (
	data introspected = iota
	schemaObject
	everyType
	oneType
	everyField
	oneTypesFields
	everyDirective
	inputValue
	introspectionLeaf
)

// count is how long one kind of introspection list is, over the schema.
type count struct{ total, max int }

func (c *count) add(n int) {
	c.total += n
	c.max = max(c.max, n)
}

// introspectionSizes are the lengths of the schema's introspection lists.
type introspectionSizes struct {
	types, directives int
	// per type
	fields, inputFields, enumValues, interfaces, possibleTypes count
	// per field, and per directive
	args, directiveArgs count
	// wrap is the deepest type reference: [ID!]! wraps ID 3 times.
	wrap int
}

func measureSchema(s *ast.Schema) introspectionSizes {
	var z introspectionSizes
	refs := func(t *ast.Type) {
		z.wrap = max(z.wrap, wrapping(t))
	}
	for _, d := range s.Types {
		z.types++
		if d.Kind == ast.InputObject {
			z.inputFields.add(len(d.Fields))
		} else {
			z.fields.add(len(d.Fields))
		}
		z.enumValues.add(len(d.EnumValues))
		z.interfaces.add(len(d.Interfaces))
		z.possibleTypes.add(len(s.PossibleTypes[d.Name]))
		for _, f := range d.Fields {
			refs(f.Type)
			if d.Kind != ast.InputObject {
				z.args.add(len(f.Arguments))
			}
			for _, a := range f.Arguments {
				refs(a.Type)
			}
		}
	}
	for _, d := range s.Directives {
		z.directives++
		z.directiveArgs.add(len(d.Arguments))
		for _, a := range d.Arguments {
			refs(a.Type)
		}
	}
	return z
}

// wrapping is how many list and non-null wrappers a type reference has.
func wrapping(t *ast.Type) int {
	n := 0
	for ; t != nil; t = t.Elem {
		if t.NonNull {
			n++
		}
		if t.Elem != nil {
			n++
		}
	}
	return n
}

func ceilDiv(a, b int) int {
	if b == 0 {
		return 0
	}
	return (a + b - 1) / b
}

// list is how many items an introspection field may hold, what scope its
// selection is measured in, and whether it is certainly null (ofType
// below the deepest wrapping).
func (z *introspectionSizes) list(name string, sc scope) (n int, child scope, null bool) {
	one := func(wrap int) scope { return scope{in: oneType, wrap: wrap} }
	leaf := scope{in: introspectionLeaf}
	switch name {
	case "__schema":
		return 1, scope{in: schemaObject}, false
	case "__type":
		return 1, one(0), false
	}
	switch sc.in {
	case schemaObject:
		switch name {
		case "types":
			return z.types, scope{in: everyType}, false
		case "directives":
			return z.directives, scope{in: everyDirective}, false
		case "queryType", "mutationType", "subscriptionType":
			return 1, one(0), false
		}
	case everyType, oneType:
		per := func(c count) int {
			if sc.in == everyType {
				return ceilDiv(c.total, z.types)
			}
			return c.max
		}
		switch name {
		case "fields":
			if sc.in == everyType {
				return per(z.fields), scope{in: everyField}, false
			}
			return per(z.fields), scope{in: oneTypesFields}, false
		case "inputFields":
			return per(z.inputFields), scope{in: inputValue}, false
		case "enumValues":
			return per(z.enumValues), leaf, false
		case "interfaces":
			return per(z.interfaces), one(0), false
		case "possibleTypes":
			return per(z.possibleTypes), one(0), false
		case "ofType":
			if sc.wrap == 0 {
				return 0, leaf, true
			}
			return 1, one(sc.wrap - 1), false
		}
	case everyField, oneTypesFields:
		switch name {
		case "args":
			if sc.in == everyField {
				return ceilDiv(z.args.total, z.fields.total), scope{in: inputValue}, false
			}
			return z.args.max, scope{in: inputValue}, false
		case "type":
			return 1, one(z.wrap), false
		}
	case inputValue:
		if name == "type" {
			return 1, one(z.wrap), false
		}
	case everyDirective:
		if name == "args" {
			return ceilDiv(z.directiveArgs.total, z.directives), scope{in: inputValue}, false
		}
	}
	return 1, leaf, false
}
