# SPDX-License-Identifier: GPL-2.0-only
# Embeds the reproducer's C sources (prelude.c, executor.c) into
# faultline-cli as kReproPrelude / kReproExecutor (tools/repro.h).
# Included from the top-level CMakeLists.txt; sets FL_REPRO_EMBEDDED.
set(out ${CMAKE_BINARY_DIR}/repro_embedded.cpp)
set(text "// Generated from tools/repro/*.c by tools/repro/embed.cmake.\n#include \"repro.h\"\nnamespace fl::cli {\n")
foreach(part prelude executor)
  set(src ${CMAKE_SOURCE_DIR}/tools/repro/${part}.c)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})
  file(READ ${src} body)
  string(SUBSTRING ${part} 0 1 first)
  string(TOUPPER ${first} first)
  string(SUBSTRING ${part} 1 -1 rest)
  string(APPEND text "extern const char kRepro${first}${rest}[] = R\"FLREPRO(${body})FLREPRO\";\n")
endforeach()
string(APPEND text "}  // namespace fl::cli\n")
file(WRITE ${out}.new "${text}")
file(COPY_FILE ${out}.new ${out} ONLY_IF_DIFFERENT)
set(FL_REPRO_EMBEDDED ${out})
