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
#
# Versions: speedtest1.c is SQLite 3.46.1's (the source tree's VERSION file is checked) and
# runs against the bundled SQLite, which must be 3.50.2 (BUNDLED below): the version the
# bundled library's sqlite3.h names, found through `cargo metadata`, is checked before
# anything is fetched. They cannot be one version: Debian's reachable suites have 3.40.1,
# 3.46.1 and 3.53.4, and no libsqlite3-sys release bundles any of them (docs/SQLITE.md,
# "speedtest1"). A bundled SQLite other than BUNDLED is refused with exit status 3 (the
# pairing must be chosen again); an unreachable archive or a changed file exits 1 or 100.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST="${1:-target/speedtest1}"
SUITE=trixie
UPSTREAM=3.46.1
BUNDLED=3.50.2
SHA256=81875fcd4bfb76bbf21568f021e81452a72539f76db9982d9114da3bafee22cc
OUT="$DEST/speedtest1.c"

for tool in cargo grep sed; do
    command -v "$tool" >/dev/null || { echo "fetch-speedtest1: $tool is required" >&2; exit 2; }
done
# The bundled SQLite: the sqlite3.h of the libsqlite3-sys package this workspace locks.
MANIFEST="$(cargo metadata --format-version 1 --locked 2>/dev/null \
    | grep -o '"manifest_path":"[^"]*/libsqlite3-sys-[^"/]*/Cargo.toml"' | head -1 \
    | sed 's/^"manifest_path":"//; s/"$//')" || true
HEADER="$(dirname "${MANIFEST:-/nonexistent/x}")/sqlite3/sqlite3.h"
if [ -z "$MANIFEST" ] || [ ! -f "$HEADER" ]; then
    echo "fetch-speedtest1: cannot find the bundled SQLite's sqlite3.h (libsqlite3-sys through 'cargo metadata'), so its version cannot be checked" >&2
    exit 2
fi
HAVE="$(sed -n 's/^#define SQLITE_VERSION  *"\([0-9.]*\)".*/\1/p' "$HEADER")"
if [ "$HAVE" != "$BUNDLED" ]; then
    echo "fetch-speedtest1: the bundled SQLite is $HAVE ($HEADER), but speedtest1.c $UPSTREAM is paired with the bundled $BUNDLED: choose the pairing again (docs/SQLITE.md, \"speedtest1\") and update SUITE, UPSTREAM, BUNDLED and SHA256 here" >&2
    exit 3
fi

if [ -f "$OUT" ] && echo "$SHA256  $OUT" | sha256sum --check --status; then
    echo "speedtest1.c (SQLite $UPSTREAM, Debian $SUITE) already at $OUT, for the bundled SQLite $BUNDLED"
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
tar -xJf "$ORIG" -C "$APT/src" "sqlite3-$UPSTREAM/VERSION" "sqlite3-$UPSTREAM/test/speedtest1.c"
TREE="$(tr -d '[:space:]' <"$APT/src/sqlite3-$UPSTREAM/VERSION")"
if [ "$TREE" != "$UPSTREAM" ]; then
    echo "fetch-speedtest1: Debian's sqlite3 $UPSTREAM source tree says it is SQLite $TREE (its VERSION file), not $UPSTREAM" >&2
    exit 1
fi
if ! echo "$SHA256  $APT/src/sqlite3-$UPSTREAM/test/speedtest1.c" | sha256sum --check --status; then
    echo "fetch-speedtest1: test/speedtest1.c in Debian's sqlite3 $UPSTREAM is not the expected file (sha256 $SHA256)" >&2
    exit 1
fi
cp "$APT/src/sqlite3-$UPSTREAM/test/speedtest1.c" "$OUT"
rm -rf "$APT"
echo "speedtest1.c (SQLite $UPSTREAM, Debian $SUITE source package) at $OUT, for the bundled SQLite $BUNDLED"
