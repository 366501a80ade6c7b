#!/bin/bash -eu
# OSS-Fuzz entry point: $CXX, $CXXFLAGS, $LIB_FUZZING_ENGINE and $OUT come
# from the base-builder; fuzz/build.sh honours them as they are. It links each
# target once and names it once per configuration in $OUT (hard links, or
# copies across file systems), so ClusterFuzz sees one target per
# configuration; fuzz/oss-fuzz/check_seeds.sh $OUT checks that each replays
# its seed corpus.
"$SRC/faultline/fuzz/build.sh"
