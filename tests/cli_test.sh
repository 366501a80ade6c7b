#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The replay command's contract: exit 0 ok, 1 violation, 2 bad input, with a
# clear message (file:line:column for parse errors). Usage: cli_test.sh CLI DATA_DIR
set -u
cli=("$@"); data=${cli[-1]}; unset 'cli[-1]'
source "$(dirname "$0")/expect.sh"
EXPECT_CMD=("${cli[@]}")
expect 0 '^verdict: ok$' replay "$data/ok.fl"
expect 1 '^verdict: violation foreign_page at op 2 \(v1/arch32/4k/direct/' replay "$data/v1_wrap.fl"
expect 2 'malformed.fl:4:13: ' replay "$data/malformed.fl"
expect 2 'unknown_label.fl:2:6: .*label' replay "$data/unknown_label.fl"
expect 2 'cannot read .*nonexistent.fl' replay "$data/nonexistent.fl"
expect 2 'unknown option --bogus' replay --bogus "$data/ok.fl"
expect 2 "bad value 'v9' for --patch" replay --patch v9 "$data/ok.fl"
expect 2 'no configuration left' replay --arch 32 "$data/ok.fl"
expect 2 'needs at least one Program' replay
expect 2 "unknown command 'frobnicate'" frobnicate
expect 0 'pre/arch64/4k/anon/mask' replay --patch pre --door anon --spec mask "$data/ok.fl"
expect_done
