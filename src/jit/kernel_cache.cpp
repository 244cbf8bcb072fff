// jit::get: the in-memory map in front of the disk cache and NVRTC, plus kiln::cache's API.
#include <atomic>
#include <ctime>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "jit/cache_config.hpp"
#include "jit/cache_inventory.hpp"
#include "jit/cache_key.hpp"
#include "jit/disk_cache.hpp"
#include "jit/jit.hpp"

#include <sys/stat.h>
#include "jit/nvrtc_api.hpp"
#include "jit/nvrtc_compile.hpp"
#include "jit/usage_log.hpp"
#include "kiln/cache.hpp"
#include "kiln/errors.hpp"

namespace kiln::jit {
namespace {

// One per key. Its mutex is held while the kernel is loaded or compiled, so threads asking
// for the same key wait for the first instead of compiling it again.
struct Slot {
  std::mutex mutex;
  std::unique_ptr<Kernel> kernel;
};

struct Counters {
  std::atomic<int64_t> compiles{0}, memory_hits{0}, disk_hits{0};
  std::atomic<double> compile_ms{0};
};

struct Cache {
  std::mutex mutex;  // guards the members below, never held while compiling
  CacheConfig config;
  std::shared_ptr<DiskCache> disk;  // null unless KILN_CACHE=disk
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots;
  // Kernels must live until the process ends, so forgotten slots and the kernels compiled
  // under KILN_CACHE=off are parked here rather than freed.
  std::vector<std::shared_ptr<Slot>> retired;
  std::vector<std::unique_ptr<Kernel>> uncached;
  Counters counters;
};

void configure(Cache& c) {
  c.config = cache_config_from_env();
  c.disk = c.config.mode == CacheMode::Disk
               ? std::make_shared<DiskCache>(c.config.dir, c.config.max_bytes)
               : nullptr;
}

// Never destroyed: other objects' destructors may still hold Kernel pointers at exit.
Cache& the_cache() {
  static Cache* cache = [] {
    auto* c = new Cache;
    configure(*c);
    return c;
  }();
  return *cache;
}

std::unique_ptr<Kernel> kernel_from(CacheEntry&& e) {
  auto k = std::make_unique<Kernel>();
  k->key = std::move(e.key);
  k->name = std::move(e.name);
  k->cubin = std::move(e.binary);
  k->compile_ms = e.compile_ms;
  return k;
}

std::unique_ptr<Kernel> compile_and_store(Cache& c, const Request& r,
                                          const std::vector<std::string>& options,
                                          const std::string& key, DiskCache* disk) {
  CompileOutput out = compile_with_nvrtc(r, options, key, disk ? disk->failed_dir() : "");
  c.counters.compiles++;
  c.counters.compile_ms += out.ms;
  // Stored under the key of the NVRTC that compiled it: the lookup's key named the NVRTC kiln
  // foresaw, which the load may have shown to be another (nvrtc_identity).
  CacheEntry e{.key = cache_key(r, options),
               .name = r.name,
               .summary = r.summary,
               .dtypes = r.dtypes,
               .arch = r.arch,
               .nvrtc_version = nvrtc_identity(),
               .options = options,
               .compile_ms = out.ms,
               .created = int64_t(std::time(nullptr)),
               .source = r.source,
               .binary = std::move(out.binary)};
  if (disk) disk->store(e);
  return kernel_from(std::move(e));
}

// The slot for `key` (null under KILN_CACHE=off) and the disk cache to use with it.
std::shared_ptr<Slot> find_slot(Cache& c, const std::string& key,
                                std::shared_ptr<DiskCache>& disk) {
  std::lock_guard lock(c.mutex);
  disk = c.disk;
  if (c.config.mode == CacheMode::Off) return nullptr;
  auto& slot = c.slots[key];
  if (!slot) slot = std::make_shared<Slot>();
  return slot;
}

// A hit saved a compile: counted in the usage log so that kiln-cache and eviction see it.
void note_hit(const std::shared_ptr<DiskCache>& disk, const std::string& key) {
  if (disk && disk->writable()) record_hit(disk->dir(), key);
}

Result get_resolved(const Request& r) {
  std::vector<std::string> options = compile_options(r.arch, r.options);
  std::string key = cache_key(r, options);
  Cache& c = the_cache();
  std::shared_ptr<DiskCache> disk;
  std::shared_ptr<Slot> slot = find_slot(c, key, disk);
  if (!slot) {
    auto k = compile_and_store(c, r, options, key, nullptr);
    std::lock_guard lock(c.mutex);
    return {c.uncached.emplace_back(std::move(k)).get(), Origin::Compiled};
  }
  std::lock_guard slot_lock(slot->mutex);
  if (slot->kernel) {
    c.counters.memory_hits++;
    note_hit(disk, key);
    return {slot->kernel.get(), Origin::Memory};
  }
  if (auto e = disk ? disk->load(key) : std::nullopt) {
    c.counters.disk_hits++;
    note_hit(disk, key);
    slot->kernel = kernel_from(std::move(*e));
    return {slot->kernel.get(), Origin::Disk};
  }
  slot->kernel = compile_and_store(c, r, options, key, disk.get());
  return {slot->kernel.get(), Origin::Compiled};
}

}  // namespace

std::string cached_where(const Request& req) {
  Request r = req;
  if (r.arch.empty()) r.arch = target_arch();
  if (r.arch.empty()) return "";
  std::string key = cache_key(r, compile_options(r.arch, r.options));
  Cache& c = the_cache();
  std::shared_ptr<DiskCache> disk;
  {
    std::lock_guard lock(c.mutex);
    disk = c.disk;
    auto it = c.slots.find(key);
    if (it != c.slots.end()) {
      std::lock_guard slot_lock(it->second->mutex);
      if (it->second->kernel) return "memory";
    }
  }
  struct stat st;
  return disk && ::stat(disk->path_for(key).c_str(), &st) == 0 ? "disk" : "";
}

Result get(const Request& r) {
  if (!r.arch.empty()) return get_resolved(r);
  Request resolved = r;
  resolved.arch = target_arch();
  if (resolved.arch.empty())
    throw DeviceError("kiln: cannot compile kernel '" + r.name +
                      "': no CUDA device found and KILN_JIT_ARCH is not set (e.g. "
                      "KILN_JIT_ARCH=sm_90 compiles without a GPU)");
  return get_resolved(resolved);
}

void clear_memory_cache() {
  Cache& c = the_cache();
  std::lock_guard lock(c.mutex);
  for (auto& [key, slot] : c.slots) c.retired.push_back(std::move(slot));
  c.slots.clear();
}

void reinitialize_for_testing() {
  flush_usage();
  clear_memory_cache();
  cache::reset_stats();
  reset_disk_warning_for_testing();
  Cache& c = the_cache();
  std::lock_guard lock(c.mutex);
  configure(c);
}

}  // namespace kiln::jit

namespace kiln::cache {

Stats stats() {
  auto& k = jit::the_cache().counters;
  return {k.compiles, k.memory_hits, k.disk_hits, k.compile_ms};
}

void reset_stats() {
  auto& k = jit::the_cache().counters;
  k.compiles = 0, k.memory_hits = 0, k.disk_hits = 0, k.compile_ms = 0;
}

std::string dir() {
  jit::Cache& c = jit::the_cache();
  std::lock_guard lock(c.mutex);
  return c.disk && c.disk->readable() ? c.disk->dir() : "";
}

namespace {

Entry to_entry(const jit::EntryFile& f) {
  const jit::CacheEntry& e = f.entry;
  return {.key = f.key,
          .name = e.name,
          .summary = e.summary,
          .dtypes = e.dtypes,
          .arch = e.arch,
          .options = e.options,
          .bytes = f.bytes,
          .compile_ms = e.compile_ms,
          .hits = f.usage.hits,
          .created = e.created,
          .last_used = f.last_used_us() / 1'000'000,
          .valid = f.valid,
          .problem = f.problem};
}

}  // namespace

std::vector<Entry> entries() {
  std::string d = dir();
  if (d.empty()) return {};
  jit::UsageMap usage = jit::read_usage(d);
  jit::merge_usage(usage, jit::pending_usage(d));
  std::vector<Entry> out;
  for (const auto& f : jit::list_entry_files(d, usage)) out.push_back(to_entry(f));
  return out;
}

void clear() {
  std::shared_ptr<jit::DiskCache> disk;
  {
    jit::Cache& c = jit::the_cache();
    std::lock_guard lock(c.mutex);
    disk = c.disk;
  }
  if (disk && disk->writable()) {
    jit::forget_pending_usage(disk->dir());
    jit::clear_directory(disk->dir());
  }
  jit::clear_memory_cache();
}

}  // namespace kiln::cache
