// SPDX-License-Identifier: GPL-2.0-only
// The geometry query (geometry.cpp): the table's map abstraction, proved
// from array_map_alloc. Prints one line per configuration; 0 iff all proved.
#pragma once

namespace fl::smt {

int prove_geometry(unsigned timeout_ms);

}  // namespace fl::smt
