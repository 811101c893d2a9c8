#!/usr/bin/env bash
# A multilingual corpus: every document filtered with the FineWeb-2 settings of its own language
# (thresholds, stop words, word segmenter), lines repeated across a host removed, then the
# documents kept and the FineWeb-2 profile used, language by language.
#
#   examples/multilingual_corpus.sh TABLE OUTPUT [LANGUAGES]
#
#   TABLE      an extraction table (the output of `contentx run`)
#   OUTPUT     the corpus directory (replaced if it exists)
#   LANGUAGES  keep only these, e.g. de,fr,ja (lid.176 codes) or deu_Latn,fra_Latn (a GlotLID
#              table's labels); default: every language
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '6,12p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
table=$1 output=$2 languages=${3:-}

contentx corpus --input "$table" --output "$output" --overwrite \
    --filters fineweb2 --line-dedup ${languages:+--languages "$languages"}

# The report's per-language table (also in OUTPUT/report.md): documents in, kept, and the FineWeb-2
# configuration that filtered them (profile; fallback when the language has none of its own).
python3 - "$output/_report.json" <<'PY'
import json
import sys

report = json.load(open(sys.argv[1], encoding="utf-8"))
print(f"{'language':<10} {'documents':>9} {'kept':>5}  profiles")
for row in report["by_language"]:
    profiles = ", ".join(
        f"{p['profile']}{' (' + p['fallback'] + ')' if p.get('fallback') else ''}: {p['documents']}"
        for p in row.get("profiles", [])
    )
    print(f"{str(row['language']):<10} {row['documents']:>9} {row['kept']:>5}  {profiles}")
PY
