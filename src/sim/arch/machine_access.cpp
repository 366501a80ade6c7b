// SPDX-License-Identifier: GPL-2.0-only
// User loads and stores: the "hardware" walks the page tables and takes a
// page fault (into the port's do_user_addr_fault) when the PTE is missing
// or the VMA forbids the access. Also /proc/PID/smaps and test accessors.
#include <csignal>
#include <cstring>

#include "machine_impl.h"

namespace fl::FL_ARCH_NS {

// The VMA at addr as the harness's views see it (the coherence check, /proc's
// maps and smaps; the MMU reads only PTEs): not the kernel's lookup, so not
// declared to the lockset checker (the port's find_vma is: locking.h kVmaTree).
static vm_area_struct *hw_vma_lookup(mm_struct *mm, ulong addr)
{
	::fl::sched::IgnoreAccesses harness;
	return vma_lookup(mm, addr);
}

Access MachineImpl::user_access(int pid, uint64_t addr64, unsigned size, bool write, uint64_t value)
{
	Enter e(this, pid);
	MmUser user(this, pid);  /* a fault runs in the kernel on this mm */
	Access out;
	ulong addr = (ulong)addr64;
	page *pages[2] = {nullptr, nullptr};
	unsigned npages = 0;

	if (!user || size == 0 || size > 8) {
		out.sig = SIGSEGV;
		return out;
	}
	mm_struct *mm = current->mm;
	/* Resolve every page the access touches before moving any byte: a
	 * faulting access has no effect (the instruction restarts or dies). */
	for (ulong a = addr & PAGE_MASK; a <= ((ulong)(addr + size - 1) & PAGE_MASK) && npages < 2;
	     a += PAGE_SIZE) {
		/* The MMU: the PTE and its rights, never the VMA (mid-split the
		 * tree may not cover a page whose PTE still maps it). */
		pte_t *pte = pte_lookup(mm, a);
		auto permitted = [&] { return pte && (write ? pte->write : !pte->protnone); };
		/* The instruction restarts after a fault; under the interleaving
		 * explorer another task may have zapped the PTE again meanwhile. */
		for (int tries = 0; !permitted(); tries++) {
			int sig = do_user_addr_fault(a == (addr & PAGE_MASK) ? addr : a, write);
			if (sig || tries == 64) {
				out.sig = sig ? sig : SIGSEGV;
				return out;
			}
			/* A sibling's exit_group (zap_other_threads) left SIGKILL
			 * pending: the task dies on its way back to user mode
			 * (exit_to_user_mode_loop -> get_signal -> do_group_exit),
			 * before the instruction restarts. */
			if (!proc(pid)) {
				out.sig = SIGKILL;
				return out;
			}
			pte = pte_lookup(mm, a);
		}
		pages[npages++] = pte->pg;
		if (a + PAGE_SIZE < a)
			break;
	}

	u8 bytes[8];
	std::memcpy(bytes, &value, 8);
	for (unsigned i = 0; i < size; i++) {
		ulong a = addr + i;
		page *pg = pages[(a & PAGE_MASK) == (addr & PAGE_MASK) ? 0 : 1];
		if (write)
			page_address_rw(pg)[offset_in_page(a)] = bytes[i];
		else
			bytes[i] = page_byte(pg, offset_in_page(a));
	}
	for (unsigned i = 0; i < size; i++) {
		ulong a = addr + i;
		vm_area_struct *vma = hw_vma_lookup(mm, a);
		if (vma && is_map_vma(vma))
			check_coherent(vma, a, &bytes[i], 1);
	}
	if (!write)
		out.bytes.assign(bytes, bytes + size);
	return out;
}

Access MachineImpl::load(int pid, uint64_t addr, unsigned size)
{
	return user_access(pid, addr, size, false, 0);
}

Access MachineImpl::store(int pid, uint64_t addr, unsigned size, uint64_t value)
{
	return user_access(pid, addr, size, true, value);
}

/*
 * coherent: the byte user space saw at `addr` is the byte the kernel's view
 * holds at the same file offset (computed exactly, without the kernel's
 * wrapping arithmetic). Offsets past the visible data are foreign_page's job.
 */
void MachineImpl::check_coherent(const vm_area_struct *vma, ulong addr, const u8 *bytes, unsigned n)
{
	/* exact: vm_pgoff < visible_pages keeps every term inside u64 */
	if (!array_ || (u64)vma->vm_pgoff >= visible_pages_)
		return;
	u64 off = ((u64)vma->vm_pgoff << PAGE_SHIFT) + (addr - vma->vm_start);
	if (off + n > visible_pages_ << PAGE_SHIFT)
		return;
	u8 kernel_view[8];
	kernel_memcpy_from(kernel_view, array_value(array_) + (ulong)off, n);
	if (std::memcmp(kernel_view, bytes, n))
		note(Invariant::coherent, "user byte at map offset " + std::to_string((u64)off) +
						  " differs from the kernel's view");
}

// fs/proc/task_mmu.c: show_smap_vma_flags mnemonics, by bit.
static const char *const kVmFlagNames[32] = {
	"rd", "wr", "ex", "sh", "mr", "mw", "me", "ms", "gd", nullptr, "pf", nullptr, nullptr,
	"lo", "io", "sr", "rr", "dc", "de", nullptr, "ac", "nr", "ht", "sf", nullptr, "wf",
	"dd", nullptr, "mm", "hg", "nh", "mg"};

// pid's VMA holding addr, and its maps line (none: found false)
vm_area_struct *MachineImpl::user_vma(int pid, uint64_t addr, VmaEntry *entry) const
{
	const Process *p = proc(pid);
	vm_area_struct *vma = p ? hw_vma_lookup(const_cast<mm_struct *>(&p->mm), (ulong)addr) : nullptr;
	if (vma)
		*entry = {true, vma->vm_start, vma->vm_end, vma->vm_pgoff, (vma->vm_flags & VM_SHARED) != 0};
	return vma;
}

VmaEntry MachineImpl::vma_at(int pid, uint64_t addr) const
{
	Enter e(this, pid);
	VmaEntry v;
	user_vma(pid, addr, &v);
	return v;
}

SmapsEntry MachineImpl::smaps(int pid, uint64_t addr) const
{
	Enter e(this, pid);
	SmapsEntry s;
	vm_area_struct *vma = user_vma(pid, addr, &s);
	if (!vma)
		return s;
	s.rss_pages = vma->vm_mm->ptes.count_range(vma->vm_start, vma->vm_end);
	for (unsigned bit = 0; bit < 32; bit++) {
		if (!(vma->vm_flags & ((vm_flags_t)1 << bit)) || !kVmFlagNames[bit])
			continue;
		if (!s.vm_flags.empty())
			s.vm_flags += ' ';
		s.vm_flags += kVmFlagNames[bit];
	}
	return s;
}

// fs/proc/task_mmu.c: m_start (mmap_read_lock_killable) ... show_smap ... m_stop
SmapsEntry MachineImpl::read_smaps(int pid, uint64_t addr)
{
	Enter e(this, pid);
	MmUser user(this, pid);
	Process *p = proc(pid);
	if (!user || !p)
		return smaps(pid, addr);
	mmap_read_lock(&p->mm);
	SmapsEntry s = smaps(pid, addr);
	mmap_read_unlock(&p->mm);
	return s;
}

static int64_t page_id(const page *pg)
{
	if (!pg)
		return -1;
	if (pg->owner == page_owner::direct_map)
		return (int64_t)(1ull << 62) + (int64_t)pg->index;
	return ((int64_t)pg->area_id << 40) + (int64_t)pg->index;
}

int64_t MachineImpl::user_page_id(int pid, uint64_t addr) const
{
	Enter e(this, pid);
	const Process *p = proc(pid);
	if (!p)
		return -1;
	pte_t *pte = pte_lookup(const_cast<mm_struct *>(&p->mm), (ulong)addr & PAGE_MASK);
	return pte ? page_id(pte->pg) : -1;
}

int64_t MachineImpl::map_data_page_id(uint64_t data_page_index) const
{
	if (!array_)
		return -1;
	return ((int64_t)map_area_id_ << 40) + (int64_t)(hdr_pages_ + data_page_index);
}

// Is the map still allocated? forget_map_if_freed's test, usable in the
// middle of an op (the interleaving explorer looks between two points, where
// a munmap may have freed the map before its front door forgot it).
bool MachineImpl::map_live() const
{
	return array_ && map_file_held();
}

uint64_t MachineImpl::map_writecnt() const
{
	return map_live() ? (uint64_t)array_->map.writecnt : 0;
}

bool MachineImpl::map_frozen() const
{
	return map_live() && array_->map.frozen;
}

int MachineImpl::page_refcount_of_map_page(uint64_t data_page_index) const
{
	Enter e(this);
	if (!array_)
		return -1;
	for (auto &a : kg_.vmap_areas) {
		if (a->id != map_area_id_)
			continue;
		auto it = a->pages.find((ulong)(hdr_pages_ + data_page_index));
		return it == a->pages.end() ? 1 : (int)it->second->_refcount;
	}
	return -1;
}

}  // namespace fl::FL_ARCH_NS
