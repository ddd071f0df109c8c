#!/usr/bin/env bash
# Regenerates messages/gen from messages/proto with the pinned buf
# (tools/go.mod) and protoc-gen-go (go.mod tool directive). Works offline once
# the modules are downloaded.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd .. && pwd)
buf=(go tool -modfile="$root/tools/go.mod" buf)
"${buf[@]}" lint
"${buf[@]}" format --diff --exit-code
"${buf[@]}" generate
