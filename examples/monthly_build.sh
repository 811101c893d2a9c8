#!/usr/bin/env bash
# A monthly build: extract this month's WARCs, then build this month's corpus without the documents
# that the corpora of earlier months already hold (--against), exactly or as near copies.
#
#   examples/monthly_build.sh WORKDIR MONTH INPUT...
#
#   WORKDIR  a local directory holding table-MONTH/ and corpus-MONTH/ of every month
#   MONTH    e.g. 2026-11 (months compare as strings: use YYYY-MM)
#   INPUT    WARC files, directories, globs, URLs, or a Common Crawl listing (warc.paths.gz: then
#            add --input-base-url https://data.commoncrawl.org/ through RUN_ARGS)
#
# RUN_ARGS and CORPUS_ARGS add options to the two jobs, e.g. RUN_ARGS="--files-per-batch 10".
# Run it again after a failure: the extraction resumes at its last committed batch (--resume) and
# the corpus is rebuilt (--overwrite).
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '5,10p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
workdir=$1 month=$2
shift 2
table="$workdir/table-$month"
corpus="$workdir/corpus-$month"

# 1. Extract (method `combined`), committing every 100 input files.
# shellcheck disable=SC2086  # RUN_ARGS is a list of options
contentx run --input "$@" --output "$table" --files-per-batch 100 --resume ${RUN_ARGS:-}

# 2. The finished corpora of earlier months: a corpus is finished when its _SUCCESS exists.
against=()
for success in "$workdir"/corpus-*/_SUCCESS; do
    [ -e "$success" ] || continue
    earlier=$(dirname "$success")
    if [[ "$(basename "$earlier")" < "corpus-$month" ]]; then
        against+=("$earlier")
    fi
done
echo "monthly_build: $month against ${#against[@]} earlier corpora: ${against[*]:-none}"

# 3. This month's corpus: FineWeb's quality filters, exact and near dedup within the month, and
#    every document that an earlier month kept dropped as seen_before.
# shellcheck disable=SC2086
contentx corpus --input "$table" --output "$corpus" --overwrite --filters fineweb \
    ${against[@]+--against "${against[@]}"} ${CORPUS_ARGS:-}
