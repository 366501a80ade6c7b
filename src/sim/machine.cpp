// SPDX-License-Identifier: GPL-2.0-only
// Picks the width-specific machine for a configuration.
#include "sim/machine.h"

namespace fl {
namespace arch32 { std::unique_ptr<Machine> make_machine_impl(const Config &); }
namespace arch64 { std::unique_ptr<Machine> make_machine_impl(const Config &); }

std::unique_ptr<Machine> make_machine(const Config &cfg)
{
	return cfg.arch == Arch::A32 ? arch32::make_machine_impl(cfg) : arch64::make_machine_impl(cfg);
}

}  // namespace fl
