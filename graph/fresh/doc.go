// Package fresh is the freshness protocol that lets every barberd process
// cache what nearly every request reads (API keys, the catalog a request
// names, availability) and still never answer with less than what a client
// has been told was written, whichever process on the same database wrote
// it.
//
// # Versions
//
// Database triggers (graph/store/versions.go) keep two change versions, so
// no write path can forget them: accounts.config_version grows with every
// change to the account's units, services, barbers and their links, working
// hours, time off and API keys; barbers.bookings_version grows with every
// change to the barber's reservations (on PostgreSQL, not with the deletion
// of one that had already ended: that frees no slot a cache could show). A
// trigger bumps a version in the
// transaction that changes the data, and a cache reads a version before (or
// in the same snapshot as) the data it caches under it. So an entry tagged
// with versions read at some moment reflects every change committed before
// that moment.
//
// # Reads
//
// A cache entry is used only while the versions read for the request are
// the ones it is tagged with. [Fence.Read] returns versions read by a query
// sent no earlier than the freshness window before Read was called (with a
// window of 0, after it was called). Concurrent callers share queries:
// while one runs, the next callers gather, and one query answers them all.
// Versions a query read answer, without a query of their own, the callers
// that arrive within the window after it was sent; once they are old
// enough that a query taking three times as long as queries take on
// average would only just land before they run out (between a quarter and
// three quarters of the window), the next such caller also has them read
// again, in the background, and the callers that come while that query
// runs count on it. So under steady load callers hardly ever wait, and the
// database sees about one small query per three quarters of a window. A
// caller that finds nothing recent enough waits for the query running if it
// was sent within the window before the caller came and reads what it
// asks for (a refresh running late), or else for a query sent after it
// came, and its error: an unreachable database still answers promptly.
// [Fence.Learn]
// takes versions that a caller's own statement read in one snapshot (a
// missed availability day's, with its rows) as a round sent when that
// statement was.
//
// # The feed (PostgreSQL)
//
// A query that reads every barber a caller names grows with the account: a
// chain's requests name many units' barbers, each read again once a window
// has passed since its last read. On PostgreSQL the trigger that bumps a
// barber's bookings version also appends the barber, the new version and
// the id of the transaction that bumped it to a log (store.ChangesTable),
// and each of the fence's queries also reads the bumps made by a
// transaction whose id is at least the previous query's snapshot xmin, and
// its own snapshot's xmin (store.VersionReader.Feed). A change that one snapshot does not show was
// made by a transaction running when it was taken, or begun after, so its
// id is at least that xmin and the next query reads it, in whatever order
// the transactions commit. A barber read once is therefore current as of
// the fence's latest query, asked for or not: queries read the accounts
// and only the barbers not yet held, and the changes, about none when
// nothing is written. A write transaction held open holds the xmin back,
// and each query reads again the changes made since it began; a query
// reads at most store.FeedLimit changes, and when it reads that many the
// fence stops the feed for feedPause and reads by id, unless the feed had
// gone feedGap without a query: then the changes were made while nobody
// read, and the feed starts again with the next query. The fence forgets
// what it holds (and starts the feed again) after feedIdle without a
// query, or past maxSeen barbers; the jobs prune the log
// (store.ChangesPruner) well after feedIdle.
//
// # Writes
//
// Every write made through barberd waits the window out before it answers.
// [Track] gives a request a context in which [Committed] records each
// commit (the resolvers call it where their transactions commit), and
// a settle that waits until the window has passed since the last of them,
// not at all when none committed. The adapters settle before the first
// byte of the answer: rest.SettleWrites for REST methods other than GET and
// HEAD, [Answer] for GraphQL mutations. So once a client is told that
// a slot is booked, a key revoked or an hour changed, every process's next
// read of versions was sent after that commit, and its caches show it. The
// request's end cuts the wait short.
//
// A change written straight to SQL, behind barberd's back, waits for
// nobody: it shows in every process within the window. Nothing booked
// depends on a cache: every write checks its slot again under the barber's
// lock, and the database forbids overlaps.
//
// # Memory
//
// [Memo] bounds a cache's memory; its entries carry their own validity
// (the versions they were computed under), which their users check.
package fresh
