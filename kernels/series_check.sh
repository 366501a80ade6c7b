# SPDX-License-Identifier: GPL-2.0-only
# Sourced by build.sh (and by the build-order test): checks that a patched
# kernel build really contains its series. A build dir copied from the stock
# build has objects whose mtimes can be newer than the patched sources; if
# make then rebuilds nothing, the "patched" kernel is the stock kernel and
# every comparison with it blames the port (issue: i386 v2 built after the
# i386 stock kernel).

# series_files SERIES: the files a unified diff writes (its "+++ b/" lines).
series_files() { sed -n 's|^+++ b/||p' "$1" | sed 's/\t.*//'; }

# series_added_functions SERIES: names of the non-inline functions whose
# definitions the series adds to a .c file (a definition line starts in
# column 0, has "name(", and does not end in ";"); a function whose
# definition line is also removed is changed, not added.
series_added_functions() {
	awk '
	/^\+\+\+ b\// { file = substr($0, 7); next }
	/^--- / { next }
	file !~ /\.c$/ { next }
	{
		sign = substr($0, 1, 1); line = substr($0, 2)
		if (sign != "+" && sign != "-") next
		if (line !~ /^[A-Za-z_]/ || line ~ /;[ \t]*$/ || line ~ /(^|[ \t])inline[ \t]/ || line ~ /^#/) next
		if (!match(line, /[A-Za-z_][A-Za-z0-9_]*\(/)) next
		name = substr(line, RSTART, RLENGTH - 1)
		if (name ~ /^(if|for|while|switch|return|sizeof|DEFINE_[A-Z_]*|EXPORT_SYMBOL[A-Z_]*|__setup|module_[a-z]+)$/) next
		if (sign == "+") added[name] = 1; else removed[name] = 1
	}
	END { for (n in added) if (!(n in removed)) print n }' "$1" | sort
}

# series_check TREE STOCK OUT SERIES: exit status 0 when TREE/OUT contains the
# series: every added function is in TREE/OUT/System.map, and the object of
# every .c file the series touches differs from STOCK/OUT's (when the stock
# build exists and compiled that file). Prints one line per failure.
series_check() {
	local tree=$1 stock=$2 out=$3 series=$4 bad=0 f o
	[ -f "$tree/$out/System.map" ] || { echo "no System.map in $tree/$out"; return 1; }
	for f in $(series_added_functions "$series"); do
		grep -q " $f\$" "$tree/$out/System.map" ||
			{ echo "System.map has no $f, which the series adds"; bad=1; }
	done
	for f in $(series_files "$series" | grep '\.c$'); do
		o=${f%.c}.o
		[ -f "$stock/$out/$o" ] || continue
		if [ ! -f "$tree/$out/$o" ]; then
			echo "$out/$o was built for stock but not for the series"; bad=1
		elif cmp -s "$stock/$out/$o" "$tree/$out/$o"; then
			echo "$out/$o is the stock object although the series changes $f"; bad=1
		fi
	done
	return $bad
}
