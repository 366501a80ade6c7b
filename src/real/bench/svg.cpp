// SPDX-License-Identifier: GPL-2.0-only
#include "real/bench/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fl::bench {

namespace {

constexpr double kW = 720, kH = 480, kLeft = 90, kRight = 170, kTop = 40, kBottom = 60;
constexpr const char *kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"};

std::string escape(const std::string &s)
{
	std::string out;
	for (char c : s)
		out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
	return out;
}

std::string num(double v)
{
	char b[32];
	snprintf(b, sizeof(b), "%.1f", v);
	return b;
}

// A decade label: 1e6 bytes as "1M"-style binary sizes would mislead on a
// decade grid, so plain powers of ten.
std::string decade(int e)
{
	static const char *names[] = {"1", "10", "100", "1k", "10k", "100k", "1M", "10M", "100M", "1G", "10G"};
	return e >= 0 && e <= 10 ? names[e] : "1e" + std::to_string(e);
}

struct Axis {
	int lo, hi;  // decades
	double from(double v, double a, double b) const
	{
		return a + (std::log10(v) - lo) / double(hi - lo) * (b - a);
	}
};

Axis axis_of(const std::vector<double> &vs)
{
	double mn = *std::min_element(vs.begin(), vs.end()), mx = *std::max_element(vs.begin(), vs.end());
	Axis a{int(std::floor(std::log10(mn))), int(std::ceil(std::log10(mx)))};
	if (a.hi == a.lo)
		a.hi++;
	return a;
}

}  // namespace

std::string loglog_svg(const std::string &title, const std::string &x_label, const std::string &y_label,
		       const std::vector<Series> &series)
{
	std::vector<double> xs, ys;
	for (const auto &s : series)
		for (auto [x, y] : s.points)
			if (x > 0 && y > 0)
				xs.push_back(x), ys.push_back(y);
	std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kW) + "\" height=\"" + num(kH) +
			"\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
	o += "<text x=\"" + num(kW / 2) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" + escape(title) + "</text>\n";
	if (xs.empty())
		return o + "<text x=\"" + num(kW / 2) + "\" y=\"" + num(kH / 2) +
		       "\" text-anchor=\"middle\">no data</text>\n</svg>\n";
	const Axis ax = axis_of(xs), ay = axis_of(ys);
	const double x0 = kLeft, x1 = kW - kRight, y0 = kH - kBottom, y1 = kTop;
	for (int e = ax.lo; e <= ax.hi; e++) {
		double x = ax.from(std::pow(10.0, e), x0, x1);
		o += "<line x1=\"" + num(x) + "\" y1=\"" + num(y0) + "\" x2=\"" + num(x) + "\" y2=\"" + num(y1) +
		     "\" stroke=\"#ddd\"/><text x=\"" + num(x) + "\" y=\"" + num(y0 + 16) +
		     "\" text-anchor=\"middle\">" + decade(e) + "</text>\n";
	}
	for (int e = ay.lo; e <= ay.hi; e++) {
		double y = ay.from(std::pow(10.0, e), y0, y1);
		o += "<line x1=\"" + num(x0) + "\" y1=\"" + num(y) + "\" x2=\"" + num(x1) + "\" y2=\"" + num(y) +
		     "\" stroke=\"#ddd\"/><text x=\"" + num(x0 - 6) + "\" y=\"" + num(y + 4) +
		     "\" text-anchor=\"end\">" + decade(e) + "</text>\n";
	}
	o += "<rect x=\"" + num(x0) + "\" y=\"" + num(y1) + "\" width=\"" + num(x1 - x0) + "\" height=\"" +
	     num(y0 - y1) + "\" fill=\"none\" stroke=\"black\"/>\n";
	o += "<text x=\"" + num((x0 + x1) / 2) + "\" y=\"" + num(kH - 18) + "\" text-anchor=\"middle\">" +
	     escape(x_label) + "</text>\n";
	o += "<text transform=\"translate(22," + num((y0 + y1) / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
	     escape(y_label) + "</text>\n";
	for (size_t i = 0; i < series.size(); i++) {
		const char *c = kColours[i % std::size(kColours)];
		std::string pts, marks;
		for (auto [x, y] : series[i].points) {
			if (x <= 0 || y <= 0)
				continue;
			std::string px = num(ax.from(x, x0, x1)), py = num(ay.from(y, y0, y1));
			pts += px + "," + py + " ";
			marks += "<circle cx=\"" + px + "\" cy=\"" + py + "\" r=\"3\" fill=\"" + c + "\"/>";
		}
		o += "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" + std::string(c) + "\" points=\"" + pts +
		     "\"/>" + marks + "\n";
		double ly = y1 + 10 + 20 * double(i);
		o += "<line x1=\"" + num(x1 + 12) + "\" y1=\"" + num(ly) + "\" x2=\"" + num(x1 + 36) + "\" y2=\"" +
		     num(ly) + "\" stroke-width=\"2\" stroke=\"" + c + "\"/><text x=\"" + num(x1 + 42) + "\" y=\"" +
		     num(ly + 4) + "\">" + escape(series[i].name) + "</text>\n";
	}
	return o + "</svg>\n";
}

}  // namespace fl::bench
