// SPDX-License-Identifier: GPL-2.0-only
// A plain main for fuzz targets built without a fuzzing engine: runs each
// file given on the command line through LLVMFuzzerTestOneInput (a crash is
// a failure). Used by ctest to replay seeds and regression inputs.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		std::ifstream in(argv[i], std::ios::binary);
		if (!in) {
			std::fprintf(stderr, "cannot read %s\n", argv[i]);
			return 2;
		}
		std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
		LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
	}
	std::printf("%d input(s) replayed\n", argc - 1);
	return 0;
}
