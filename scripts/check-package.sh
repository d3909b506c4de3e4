#!/usr/bin/env bash
# The package as users get it: `npm pack`, installed into an empty folder without dev dependencies
# or sources, must run (`sitefleet --help`, and the demo against its own simulator).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
tarball=$(npm pack --silent --pack-destination "$dir" | tail -n 1)
cd "$dir"
npm init -y >/dev/null
npm install --omit=dev --no-audit --no-fund --silent "./$tarball"
test ! -e node_modules/sitefleet/src
test ! -e node_modules/typescript
npx --no-install sitefleet --help >/dev/null
npx --no-install sitefleet --version
npx --no-install sitefleet demo --size 6 >demo.log || { cat demo.log; exit 1; }
grep -q 'run nightly-backups.yaml' demo.log
echo "package check: $tarball installs and runs (help, version, demo)"
