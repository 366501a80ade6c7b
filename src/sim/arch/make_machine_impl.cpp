// SPDX-License-Identifier: GPL-2.0-only
#include "machine_impl.h"

namespace fl::FL_ARCH_NS {

std::unique_ptr<Machine> make_machine_impl(const Config &cfg)
{
	return std::make_unique<MachineImpl>(cfg);
}

}  // namespace fl::FL_ARCH_NS
