#!/bin/bash -eu
# OSS-Fuzz entry point: $CXX, $CXXFLAGS, $LIB_FUZZING_ENGINE and $OUT come
# from the base-builder; fuzz/build.sh honours them as they are.
"$SRC/faultline/fuzz/build.sh"
