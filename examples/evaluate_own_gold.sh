#!/usr/bin/env bash
# Score the extraction methods on your own gold set, e.g. pages of the sites your corpus draws on.
#
#   examples/evaluate_own_gold.sh [GOLD_DIR] [RESULTS.json]
#
#   GOLD_DIR      a directory of NAME.html (the saved page, plain or gzip) and NAME.txt (the text you
#                 want extracted from it, blocks on their own lines); default: examples/gold, two
#                 pages written for this example
#   RESULTS.json  where the scores are written as JSON too (default: output/evaluation.json, under
#                 the directory you run it from)
#
# The table has, per method, the shingle precision / recall / F1 of the scrapinghub benchmark, the
# word-level LCS F1 and CleanEval score, ms per page, empty pages and errors; the full-text baseline
# (all visible text) is always included. Add --bootstrap 1000 for +- std with more pages.
set -euo pipefail
gold=${1:-$(dirname "$0")/gold}
results=${2:-output/evaluation.json}
mkdir -p "$(dirname "$results")"
contentx evaluate --gold "$gold" --methods combined,cectd-ds,cetr --json "$results"
