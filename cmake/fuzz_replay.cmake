# SPDX-License-Identifier: GPL-2.0-only
# A fuzz target built without an engine (fuzz/replay_main.cpp), once per
# source, and given one name per configuration as fuzz/build.sh does (hard
# links under build/<preset>/fuzz-replay/): the binary reads its
# configuration from its name (fuzz/fuzz_config.h), so ctest runs the same
# name-to-configuration path as the libFuzzer and AFL++ binaries.
#
#   fl_fuzz_replay(SOURCE LIBRARY NAME...)   executable fuzz-replay-SOURCE, linked to LIBRARY
#   fl_fuzz_replay_path(VAR NAME)            the path of one of those names
set(FL_FUZZ_REPLAY_DIR ${CMAKE_BINARY_DIR}/fuzz-replay)

function(fl_fuzz_replay source library)
  set(exe fuzz-replay-${source})
  add_executable(${exe} ${CMAKE_SOURCE_DIR}/fuzz/${source}_fuzzer.cpp ${CMAKE_SOURCE_DIR}/fuzz/replay_main.cpp)
  target_link_libraries(${exe} PRIVATE ${library})
  add_custom_command(TARGET ${exe} POST_BUILD COMMAND ${CMAKE_COMMAND} -E make_directory ${FL_FUZZ_REPLAY_DIR})
  foreach(name ${ARGN})
    add_custom_command(TARGET ${exe} POST_BUILD
                       COMMAND ln -f $<TARGET_FILE:${exe}> ${FL_FUZZ_REPLAY_DIR}/${name}
                       COMMENT "" VERBATIM)
  endforeach()
endfunction()

function(fl_fuzz_replay_path var name)
  set(${var} ${FL_FUZZ_REPLAY_DIR}/${name} PARENT_SCOPE)
endfunction()
