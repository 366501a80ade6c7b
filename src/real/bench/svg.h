// SPDX-License-Identifier: GPL-2.0-only
// A small log-log line plot written as SVG text (no plotting library).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fl::bench {

struct Series {
	std::string name;
	std::vector<std::pair<double, double>> points;  // (x, y), both > 0
};

// Decade grid on both axes, one coloured polyline with markers per series,
// a legend. Points with x or y <= 0 are left out.
std::string loglog_svg(const std::string &title, const std::string &x_label, const std::string &y_label,
		       const std::vector<Series> &);

}  // namespace fl::bench
