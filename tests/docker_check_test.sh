#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The container pieces' contract, without building an image (that takes
# minutes: ./faultline docker-check): bad options exit 2 with a clear line
# before anything is installed or fetched, and the Dockerfile takes its
# packages from ./faultline instead of listing them. Usage: docker_check_test.sh SRC
set -u
src=$1
source "$(dirname "$0")/expect.sh"
EXPECT_CMD=()
check=(bash "$src/tools/podman_check.sh")
expect 2 "unknown option '--bogus'" "${check[@]}" --bogus
expect 2 'usage: tools/podman_check.sh' "${check[@]}" --cache
expect 2 'cache must live outside the repository' "${check[@]}" --cache "$src/build/podman"
expect 2 'deps takes no arguments' "$src/faultline" deps extra
expect 0 'docker-check \[--fresh\]' "$src/faultline" help
# The Dockerfile installs through ./faultline deps and names no package itself.
expect 0 'RUN \./faultline deps' cat "$src/Dockerfile"
expect 1 '^$' grep -nE 'apt-get (-[^ ]+ )*install' "$src/Dockerfile"
expect 0 '^CMD \["\./faultline", "verify"\]$' cat "$src/Dockerfile"
expect_done
