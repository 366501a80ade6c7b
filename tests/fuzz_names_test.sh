#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A fuzz binary reads its configuration from its name (fuzz/fuzz_config.h),
# FL_FUZZ_CONFIG overrides the name, and a name or configuration it cannot
# read exits 2 saying how to name it. Each case hard-links the one replay
# binary under a configuration's name, as fuzz/build.sh does.
# Usage: fuzz_names_test.sh "EMULATOR" PROGRAM_BINARY BOUNDS_BINARY WORKDIR SEEDS_DIR
set -u
emu=$1 program=$2 bounds=$3 dir=$4 seeds=$5
source "$(dirname "$0")/expect.sh"
rm -rf "$dir" && mkdir -p "$dir"
seed=$(ls "$seeds"/* | head -1)
as() {  # as BINARY NAME [ENV=VALUE]: the next expect runs BINARY under NAME
	ln -f "$1" "$dir/$2"
	EXPECT_CMD=(env ${3:-} $emu "$dir/$2")
}
as "$program" program-v3-arch32-regular
expect 0 'configuration v3/arch32/4k/regular/mask \(from the name program-v3-arch32-regular\)' "$seed"
as "$program" program-v3-arch64-anon-toctou_2021
expect 0 'configuration v3/arch64/4k/anon/mask/toctou_2021 \(from the name' "$seed"
as "$bounds" bounds-v1-arch32
expect 0 'configuration v1/arch32 \(from the name bounds-v1-arch32\)' "$seed"
as "$program" program-pre-arch32-anon FL_FUZZ_CONFIG=v2/arch64/16k/regular/bypass
expect 0 'configuration v2/arch64/16k/regular/bypass \(FL_FUZZ_CONFIG\)' "$seed"
as "$program" program-v9-arch64-anon
expect 2 "bad configuration 'v9/arch64/4k/anon/mask'" "$seed"
as "$program" program-v2-arch64-anon-threads-x
expect 2 "cannot tell the configuration from the binary's name 'program-v2-arch64-anon-threads-x'" "$seed"
as "$program" program
expect 2 'name the binary program-<patch>-arch<32\|64>-<door>' "$seed"
as "$program" program-v2-arch64-anon FL_FUZZ_CONFIG=v2/arch99
expect 2 "bad configuration 'v2/arch99'" "$seed"
expect_done
