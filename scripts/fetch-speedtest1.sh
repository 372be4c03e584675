#!/usr/bin/env bash
# Fetches SQLite's benchmark program test/speedtest1.c (public domain) for
# `commitlab sqlite speedtest1` from Debian's sqlite3 source package: trixie's, SQLite
# 3.46.1, the newest stable Debian release's and the closest to the bundled SQLite 3.50.2
# that is not newer than it (a newer speedtest1.c may call interfaces 3.50.2 lacks; sid's
# version moves). It is not kept in the repository. apt runs with a private sources list
# (deb-src only), lists and cache under the destination, so the system's apt configuration
# and package lists are left alone; it needs deb.debian.org.
#
#   scripts/fetch-speedtest1.sh [DEST]    # default target/speedtest1; writes DEST/speedtest1.c
#
# The file's SHA-256 is checked: a different file (a new Debian revision that patches it)
# is refused rather than measured silently.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST="${1:-target/speedtest1}"
SUITE=trixie
UPSTREAM=3.46.1
SHA256=81875fcd4bfb76bbf21568f021e81452a72539f76db9982d9114da3bafee22cc
OUT="$DEST/speedtest1.c"

if [ -f "$OUT" ] && echo "$SHA256  $OUT" | sha256sum --check --status; then
    echo "speedtest1.c (SQLite $UPSTREAM, Debian $SUITE) already at $OUT"
    exit 0
fi
for tool in apt-get tar xz sha256sum; do
    command -v "$tool" >/dev/null || { echo "fetch-speedtest1: $tool is required" >&2; exit 2; }
done
APT="$(realpath -m "$DEST/apt")"
mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/src"
printf 'deb-src http://deb.debian.org/debian %s main\n' "$SUITE" >"$APT/sources.list"
OPTS=(-o "Dir::Etc::SourceList=$APT/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache"
      -o APT::Sandbox::User="$(id -un)" -o Debug::NoLocking=true)
apt-get -qq "${OPTS[@]}" update
(cd "$APT/src" && apt-get -qq "${OPTS[@]}" source --download-only "sqlite3/$SUITE")
ORIG="$APT/src/sqlite3_$UPSTREAM.orig.tar.xz"
if [ ! -f "$ORIG" ]; then
    echo "fetch-speedtest1: Debian $SUITE no longer has sqlite3 $UPSTREAM (found: $(ls "$APT/src"))" >&2
    exit 1
fi
tar -xJf "$ORIG" -C "$APT/src" "sqlite3-$UPSTREAM/test/speedtest1.c"
if ! echo "$SHA256  $APT/src/sqlite3-$UPSTREAM/test/speedtest1.c" | sha256sum --check --status; then
    echo "fetch-speedtest1: test/speedtest1.c in Debian's sqlite3 $UPSTREAM is not the expected file (sha256 $SHA256)" >&2
    exit 1
fi
cp "$APT/src/sqlite3-$UPSTREAM/test/speedtest1.c" "$OUT"
rm -rf "$APT"
echo "speedtest1.c (SQLite $UPSTREAM, Debian $SUITE source package) at $OUT"
