// Package gqlserver is barberd's GraphQL HTTP handler over the resolvers of
// package graph: its transports, its error presenter, and the limits every
// request meets before anything runs.
//
// Before any resolver runs, with or without an API key, a request is
// refused with validation_failed, naming what is wrong:
//
//   - when its text is not clean: bytes that are not UTF-8 anywhere in the
//     request, a NUL in any string input (cleantext.go);
//   - when its document is too large or too nested to parse and validate
//     cheaply (cost_shape.go, and "Bounds before the cost" below);
//   - when its operation costs too much, nests too deep, asks for too large
//     a page or filters by too many conditions (cost.go, and "The cost of an
//     operation" below).
//
// A mutation's answer goes out once its writes are settled (package
// fresh).
//
// # The cost of an operation
//
// Every GraphQL operation, with or without an API key, is measured after it
// is validated and before anything runs, and refused with validation_failed
// when it would cost more than MaxCost, nest deeper than maxDepth, ask
// for a page over graph.MaxPageSize, or filter by more than maxFilterSize
// conditions.
//
// The cost counts what the answer can hold. Each field costs 1 for each
// time it can appear in the answer; a list multiplies what it selects by
// its length: a connection by its page (first or last,
// graph.DefaultPageSize without either), a list that takes first
// (bookableBarbers, apiKeys, ...) the same way, pendingNotifications,
// takeNotifications and appointmentsByClient by their limit, nodes by its
// number of ids, an availability range's days by graph.MaxRangeDays, a
// day's slots by daySlots, the next free slots by graph.MaxNextLimit, a
// webhook delivery's attempts by graph.MaxWebhookAttemptsShown,
// webhookEndpoints by graph.MaxWebhookEndpoints, and any other list (the
// units, services and barbers of an entity, ...) by listItems. Nested lists
// multiply. A field that runs a database query of its own (a root
// field, a connection's totalCount or pageInfo, each id of nodes) costs
// queryCost more, so one operation runs at most MaxCost/queryCost of them.
// Introspection counts the same way, each list of the schema by its real
// length (an average where it lists every type or every field), so
// GraphiQL's own introspection query costs about 33,000 with today's schema
// (TestDashboardCosts pins it; its answer holds fewer values) and twice it
// is refused.
//
// What the admin dashboard asks for, and what it costs:
//
//   - a day's agenda with the unit, service, barber and customer names
//     (agenda(unitId:, date:) { edges { node { id startsAt endsAt status
//     unit { name } service { name } barber { name } customer { name phone }
//     } } }): 1,702 for the default page of 50, 8,002 for first: 500;
//   - a page of 100 barbers with a few fields and their units and services
//     (barbers(first: 100) { totalCount pageInfo { hasNextPage endCursor }
//     edges { cursor node { id name active units { id name } services { id
//     name durationMinutes } } } }): 13,706;
//   - bookableBarbers with each barber's services and units: 5,201 (a page
//     of 50);
//   - a page of an endpoint's webhook delivery log with each delivery's
//     attempts (webhookDeliveries(endpointId:) { edges { node { id status
//     createdAt attempts { attemptedAt statusCode latencyMs error } } } }):
//     11,252.
//
// The numbers are checked by TestDashboardCosts.
//
// # Bounds before the cost
//
// The parser and validator's own work is bounded before the cost is: a
// request of the body limit, 1 MiB, must be refused within milliseconds.
//
// Before it is parsed, a document may have at most maxDocumentBytes,
// maxTokens, and maxNesting levels of selection sets, lists and objects;
// its variables too may nest at most maxNesting levels. gqlparser spends
// time superlinear in how deeply values nest: ValuesOfCorrectType reads
// every value's subtree again, and so does the coercion of variables (a
// where filter nested 500 levels cost tens of milliseconds).
//
// gqlparser's validation is otherwise linear in the document, except for
// OverlappingFieldsCanBeMerged, which compares every pair of fields that
// answer under the same name (a 64 KiB document of one field repeated
// took 14 s). So before it runs, the document's shape is checked: how many
// selections it expands to with its fragments spread, how many such pairs
// and fragments it has, how many names one selection set answers under
// (the executor gathers each object's fields in time quadratic in them),
// and how many directives one place carries. Validation reports at most
// maxValidationErrors errors, without "did you mean" suggestions (each
// compares a name with every name of its type).
//
// Legitimate documents are far below these: GraphiQL's introspection query
// has 1.9 KiB, 160 tokens, 10 levels, and expands to 227 selections.
package gqlserver
