#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The corpus every whole-corpus job runs (replay, oracle, kernels run/diff,
# repro, selftest): the hand-written Programs, each corpus's regressions and
# the findings, one path per line relative to the repository root. Keep in
# step with CMakeLists.txt's FL_CORPUS_PROGRAMS and verifylib's corpus_files.
#   tools/corpus_files.sh [ROOT]
cd "${1:-$(dirname "$0")/..}" && ls corpora/programs/*.fl corpora/*/regression/*.fl corpora/findings/*.fl 2>/dev/null
