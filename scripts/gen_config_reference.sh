#!/usr/bin/env bash
# Regenerates the key tables of docs/configuration.md from the schema in
# lib/config/config.h (between the BEGIN/END markers). Run after adding a key.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cmake --build "$build" --target config_reference >/dev/null
doc=docs/configuration.md
tables=$("$build/bin/config_reference")
/usr/bin/python3 - "$doc" "$tables" <<'PY'
import sys
path, tables = sys.argv[1], sys.argv[2]
text = open(path).read()
begin, end = "<!-- BEGIN GENERATED KEYS -->", "<!-- END GENERATED KEYS -->"
head, rest = text.split(begin)
_, tail = rest.split(end)
open(path, "w").write(head + begin + "\n" + tables.strip() + "\n" + end + tail)
PY
echo "updated $doc"
