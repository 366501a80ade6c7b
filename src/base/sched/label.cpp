// SPDX-License-Identifier: GPL-2.0-only
#include "base/sched/label.h"

#include <deque>
#include <mutex>
#include <unordered_map>

#include "base/arena.h"

namespace fl::sched {

namespace {

uint64_t fnv1a(const std::string &s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (unsigned char c : s)
		h = (h ^ c) * 0x100000001b3ull;
	return h;
}

struct Registry {
	std::mutex lock;  // call sites may first run on any thread
	std::deque<Label> labels;  // stable addresses
	std::unordered_map<std::string, const Label *> by_name;
};

Registry &registry()
{
	static Registry r;
	return r;
}

}  // namespace

const Label &intern_label(const char *func, const char *site)
{
	arena::Pause heap;  /* the registry is process state: never in a machine's arena */
	return label_named(std::string(func) + ":" + site);
}

const Label &label_named(const std::string &name)
{
	arena::Pause heap;
	Registry &r = registry();
	std::lock_guard<std::mutex> g(r.lock);
	auto it = r.by_name.find(name);
	if (it != r.by_name.end())
		return *it->second;
	r.labels.push_back(Label{uint32_t(r.labels.size()), name, fnv1a(name)});
	const Label *l = &r.labels.back();
	r.by_name.emplace(name, l);
	return *l;
}

const Label &label_by_id(uint32_t id)
{
	Registry &r = registry();
	std::lock_guard<std::mutex> g(r.lock);
	return r.labels[id];
}

}  // namespace fl::sched
