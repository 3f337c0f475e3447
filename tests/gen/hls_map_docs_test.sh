#!/usr/bin/env bash
# docs/deploy.md carries the HLS bitstream's register map exactly as tessera-hls-map-gen derives it from hls/design.
# Usage: hls_map_docs_test.sh GENERATED_TABLE.md DOCS/deploy.md
set -u
table=${1:?usage: hls_map_docs_test.sh TABLE.md deploy.md}
doc=${2:?}
in_doc=$(sed -n '/<!-- BEGIN hls register map/,/<!-- END hls register map -->/p' "$doc" | sed '1d;$d')
if [ -z "$in_doc" ]; then
  echo "$doc: no table between the <!-- BEGIN hls register map --> and <!-- END hls register map --> markers"
  exit 1
fi
if [ "$in_doc" != "$(cat "$table")" ]; then
  echo "$doc: the HLS register map differs from $table (tessera-hls-map-gen --md): paste it between the markers"
  diff <(echo "$in_doc") "$table"
  exit 1
fi
echo "hls_map_docs_test: docs/deploy.md carries the generated HLS register map"
