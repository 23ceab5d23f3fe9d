#!/usr/bin/env bash
# Fetches the browser builds the offline GraphiQL playground embeds, from the
# npm registry at pinned versions, into assets/, and checks them against
# assets/SHA256SUMS (committed with them).
#
#   ./fetch-assets.sh          fetch and verify; fails if npm's files differ
#   ./fetch-assets.sh -c       verify the files in assets/ only (no network)
#   ./fetch-assets.sh -u       fetch and rewrite SHA256SUMS (after a version bump)
#
# npm pack itself checks each tarball against the registry's integrity hash.
set -euo pipefail
cd "$(dirname "$0")/assets"

GRAPHIQL_VERSION=3.9.0 # the last graphiql 3; it ships UMD builds (4 and later do not)
REACT_VERSION=18.3.1   # react and react-dom; 19 dropped UMD builds

# package@version  file in the tarball  name in assets/
FILES=(
  "graphiql@$GRAPHIQL_VERSION   graphiql.min.js                graphiql.min.js"
  "graphiql@$GRAPHIQL_VERSION   graphiql.min.css               graphiql.min.css"
  "graphiql@$GRAPHIQL_VERSION   LICENSE                        LICENSE.graphiql"
  "react@$REACT_VERSION         umd/react.production.min.js    react.production.min.js"
  "react@$REACT_VERSION         LICENSE                        LICENSE.react"
  "react-dom@$REACT_VERSION     umd/react-dom.production.min.js react-dom.production.min.js"
  "react-dom@$REACT_VERSION     LICENSE                        LICENSE.react-dom"
)

mode=fetch
case "${1:-}" in
  "") ;;
  -c) mode=check ;;
  -u) mode=update ;;
  *) echo "usage: $0 [-c | -u]" >&2; exit 2 ;;
esac

if [ "$mode" != check ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  declare -A packed=()
  for line in "${FILES[@]}"; do
    read -r pkg src dst <<< "$line"
    if [ -z "${packed[$pkg]:-}" ]; then
      mkdir -p "$tmp/$pkg"
      tgz=$(cd "$tmp/$pkg" && npm pack --silent --loglevel=error "$pkg" | tail -n1)
      tar -xzf "$tmp/$pkg/$tgz" -C "$tmp/$pkg"
      packed[$pkg]=1
    fi
    cp "$tmp/$pkg/package/$src" "$dst"
    chmod 0644 "$dst"
  done
fi

if [ "$mode" = update ]; then
  for line in "${FILES[@]}"; do
    read -r _ _ dst <<< "$line"
    sha256sum "$dst"
  done > SHA256SUMS
  echo "wrote assets/SHA256SUMS:"
  cat SHA256SUMS
  exit 0
fi
sha256sum --strict -c SHA256SUMS
