// pool_cmds.cc — `softwrap pool create|info|check|recover`.
//
// create and recover use only the public C API.  info and check must see
// the pool's layout and walk its heap, which only the pool layer knows, so
// they use two internal entry points: PoolFile::open (validates and maps
// the file without running recovery) and Allocator::check (walks the chunk
// table and block headers).  Allocator::check reads home locations, so both
// first open the pool through the C API (running recovery), quiesce it and
// close it — after a clean close every committed store is at home — and
// only then map the file raw.  `info --raw` skips that step and shows the
// file exactly as it is.
#include <sys/stat.h>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "medium/persistence_domain.h"
#include "pool/allocator.h"
#include "pool/pool.h"
#include "pool/pool_format.h"

namespace softwrap::cli {
namespace {

void create_usage(FILE* out) {
  fprintf(out,
          "Usage: softwrap pool create <path> [--size SIZE] [--max SIZE|unlimited] [--lanes N]\n"
          "                            [--lane-size SIZE] [--force] [--engine E] [--medium M]\n"
          "  Creates a pool file.  SIZE takes K/M/G/T suffixes (binary); default 64M, at least 8M.\n"
          "  On a device-DAX device (/dev/daxX.Y) the pool is the whole device unless --size\n"
          "  says less; it does not grow, and --force is needed unless its first page is zero.\n"
          "  --max SIZE         let the pool grow up to SIZE when its heap is full (\"unlimited\":\n"
          "                     as far as the file system goes); default: it does not grow\n"
          "                     (SOFTWRAP_POOL_MAX overrides)\n"
          "  --lanes N          log lanes = wraps open at once (default 32)\n"
          "  --lane-size SIZE   bytes of log per lane (default: the lanes share pool/16, at most\n"
          "                     24M, at least 64K each; a wrap that outgrows its lane\n"
          "                     continues in free heap space)\n"
          "  --force            replace an existing file\n");
}

void info_usage(FILE* out) {
  fprintf(out,
          "Usage: softwrap pool info <path> [--raw] [--engine E] [--medium M]\n"
          "  Prints the pool's header, root, log watermark and heap statistics.\n"
          "  The pool is opened (running recovery) and closed first, so the heap\n"
          "  statistics include every committed wrap; --raw reads the file as it is,\n"
          "  without recovery (heap statistics then miss unretired wraps).\n");
}

void check_usage(FILE* out) {
  fprintf(out,
          "Usage: softwrap pool check <path> [--engine E] [--medium M]\n"
          "  Opens the pool (running recovery), retires everything home, closes it,\n"
          "  then verifies the header, the root and every allocator invariant.\n"
          "  Exit 0 if consistent, 1 (with a message) otherwise.\n");
}

void recover_usage(FILE* out) {
  fprintf(out,
          "Usage: softwrap pool recover <path> [--engine E] [--medium M]\n"
          "  Opens the pool, which runs recovery, prints what recovery did, closes it.\n");
}

void print_report(const sw_recovery_report& r) {
  printf("  redo wraps replayed      %" PRIu64 " (%s)\n", r.redo_wraps_replayed, format_bytes(r.redo_bytes_replayed).c_str());
  printf("  undo wraps rolled back   %" PRIu64 " (%s)\n", r.undo_wraps_rolled_back, format_bytes(r.undo_bytes_restored).c_str());
  printf("  torn frames skipped      %" PRIu64 "\n", r.torn_frames_skipped);
  printf("  elapsed                  %.3f ms\n", static_cast<double>(r.elapsed_ns) / 1e6);
}

// Opens (recovery), quiesces and closes the pool; prints the report if
// asked.  0 or the exit code of the failure.
// sw_pool_platform's answer, copied out of the pool before it is closed.
struct PlatformText {
  std::string medium, flush_insn, domain, source, detail;
  bool synchronous = false;
  size_t page_size = 0;
};

int recover_and_close(const std::string& path, const sw_config& cfg, bool print, PlatformText* platform = nullptr) {
  sw_pool* p = sw_pool_open(path.c_str(), &cfg);
  if (!p) return report_failure("cannot open '" + path + "'");
  if (platform != nullptr) {
    sw_pool_platform_info pi{};
    if (sw_pool_platform(p, &pi) != 0) {
      sw_pool_close(p);
      return report_failure("cannot read the pool's platform");
    }
    *platform = PlatformText{pi.medium, pi.flush_insn, pi.persistence_domain, pi.domain_source,
                             pi.domain_detail, pi.synchronous != 0, pi.page_size};
  }
  sw_recovery_report rep{};
  if (sw_pool_recovery_report(p, &rep) != 0) {
    sw_pool_close(p);
    return report_failure("cannot read the recovery report");
  }
  if (print) {
    printf("recovery of %s (engine %s, medium %s):\n", path.c_str(), sw_pool_engine_name(p), sw_pool_medium_name(p));
    print_report(rep);
  }
  if (sw_pool_quiesce(p) != 0) {
    sw_pool_close(p);
    return report_failure("cannot retire the pool's log");
  }
  if (sw_pool_close(p) != 0) return report_failure("cannot close '" + path + "'");
  return 0;
}

std::string format_uuid(const uint8_t* u) {
  char buf[40];
  snprintf(buf, sizeof buf, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
           u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  return buf;
}

std::string format_time_ns(uint64_t ns) {
  time_t secs = static_cast<time_t>(ns / 1000000000u);
  struct tm tm {};
  char buf[64];
  if (!gmtime_r(&secs, &tm) || strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0) return "?";
  return buf;
}

// "grows up to 1.0 GiB", "grows as far as the file system goes" or "does
// not grow", for a pool whose growth limit (this open's) is max.
std::string growth_text(uint64_t max, uint64_t size) {
  if (max <= size) return "does not grow";
  if (max >= SW_POOL_SIZE_UNLIMITED) return "grows as far as the file system goes";
  return "grows up to " + format_bytes(max);
}

// Checks the header's regions against each other and the root against
// the heap.  Returns an empty string or the first problem found.
std::string check_layout(const PoolFile& pf) {
  const PoolHeader& h = pf.header();
  const uint64_t log_end = h.log_offset + uint64_t{h.lanes} * h.lane_size;
  const uint64_t heap_end = h.heap_offset + h.chunk_count * h.chunk_size;
  if (h.pool_size > pf.size()) return "the pool is smaller than its header says it was created";
  if (h.meta_offset + sizeof(PoolMeta) > h.lane_table_offset) return "pool metadata overlaps the lane table";
  if (h.lane_table_offset + uint64_t{h.lanes} * sizeof(LaneHeader) > h.log_offset)
    return "lane table overlaps the log";
  if (log_end > h.chunk_table_offset) return "log overlaps the chunk table";
  if (h.chunk_table_offset + h.chunk_count * 8 > h.heap_offset) return "chunk table overlaps the heap";
  if (heap_end > h.pool_size) return "zone 0's heap extends past the pool's first zone";
  const PoolMeta* m = pf.meta();
  if (m->root_offset != 0) {
    if (m->root_size == 0 || !pf.heap_contains(m->root_offset, m->root_size))
      return "root object (offset " + std::to_string(m->root_offset) + ", size " + std::to_string(m->root_size) +
             ") is not inside the heap";
  } else if (m->root_size != 0) {
    return "root size is set but there is no root object";
  }
  return "";
}

int pool_create(const std::vector<std::string>& args) {
  Options opts({"size", "max", "lanes", "lane-size", "engine", "medium"}, {"force"});
  std::string err;
  if (!opts.parse(args, &err)) return usage_error(err, "pool create");
  if (opts.help()) return create_usage(stdout), kExitOk;
  if (opts.positional().size() != 1) return usage_error("pool create needs exactly one <path>", "pool create");
  const std::string& path = opts.positional()[0];
  sw_config cfg{};
  if (!apply_engine_medium(opts, &cfg)) return kExitUsage;
  uint64_t size = 64ull << 20, v;
  struct stat st{};
  if (!opts.has("size") && ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) size = 0;  // the whole device
  if (opts.has("size") && !parse_size(opts.get("size"), &size))
    return usage_error("bad --size '" + opts.get("size") + "'", "pool create");
  if (opts.has("max")) {
    if (opts.get("max") == "unlimited") {
      cfg.max_size = SW_POOL_SIZE_UNLIMITED;
    } else if (!parse_size(opts.get("max"), &cfg.max_size) || cfg.max_size < size) {
      return usage_error("bad --max '" + opts.get("max") + "' (a size at least --size, or unlimited)", "pool create");
    }
  }
  if (opts.has("lanes")) {
    if (!parse_u64(opts.get("lanes"), &v) || v == 0 || v > UINT32_MAX)
      return usage_error("bad --lanes '" + opts.get("lanes") + "'", "pool create");
    cfg.lanes = static_cast<uint32_t>(v);
  }
  if (opts.has("lane-size")) {
    if (!parse_size(opts.get("lane-size"), &cfg.lane_size) || cfg.lane_size == 0)
      return usage_error("bad --lane-size '" + opts.get("lane-size") + "'", "pool create");
  }
  if (opts.has("force")) cfg.flags |= SW_CONFIG_OVERWRITE;

  sw_pool* p = sw_pool_create(path.c_str(), size, &cfg);
  if (!p) {
    const bool exists = sw_errno() == SW_EEXIST;
    report_failure("cannot create '" + path + "'");
    if (exists) fprintf(stderr, "Use --force to replace it.\n");
    return kExitFailed;
  }
  const auto* h = static_cast<const PoolHeader*>(sw_pool_base(p));
  printf("created %s: %s, %u lanes x %s of log, heap %s, %s (engine %s, medium %s)\n", path.c_str(),
         format_bytes(sw_pool_size(p)).c_str(), h->lanes, format_bytes(h->lane_size).c_str(),
         format_bytes(h->chunk_count * h->chunk_size).c_str(), growth_text(cfg.max_size >= SW_POOL_SIZE_UNLIMITED ? cfg.max_size : sw_pool_max_size(p), sw_pool_size(p)).c_str(),
         sw_pool_engine_name(p), sw_pool_medium_name(p));
  if (sw_pool_close(p) != 0) return report_failure("cannot close '" + path + "'");
  return kExitOk;
}

int pool_info(const std::vector<std::string>& args) {
  Options opts({"engine", "medium"}, {"raw"});
  std::string err;
  if (!opts.parse(args, &err)) return usage_error(err, "pool info");
  if (opts.help()) return info_usage(stdout), kExitOk;
  if (opts.positional().size() != 1) return usage_error("pool info needs exactly one <path>", "pool info");
  sw_config cfg{};
  if (!apply_engine_medium(opts, &cfg)) return kExitUsage;
  const std::string& path = opts.positional()[0];
  const bool raw = opts.has("raw");
  PlatformText plat;
  if (!raw) {
    if (int rc = recover_and_close(path, cfg, false, &plat)) return rc;
  }
  std::unique_ptr<PoolFile> pf = PoolFile::open(path);
  if (!pf) return report_failure("cannot open '" + path + "'");
  if (raw) {
    // Not opened through the library: no medium is chosen, but the domain
    // and the mapping are the file's.
    DomainReport d;
    std::string derr;
    if (!resolve_persistence_domain(pf->fd(), &d, &derr)) return report_failure(derr);
    plat = PlatformText{"not chosen (--raw)", "not chosen (--raw)", persistence_domain_name(d.domain), d.source,
                        d.detail, pf->is_dax(), 4096};
  }
  const PoolHeader& h = pf->header();
  const PoolMeta* m = pf->meta();
  printf("pool %s%s\n", path.c_str(), raw ? " (raw: recovery not run)" : "");
  printf("  layout version   %u\n", h.layout_version);
  printf("  size             %s (%" PRIu64 " bytes; created with %s)\n", format_bytes(pf->size()).c_str(),
         static_cast<uint64_t>(pf->size()), format_bytes(h.pool_size).c_str());
  const uint64_t limit = pf->size_limit();
  printf("  maximum          %s\n", limit >= SW_POOL_SIZE_UNLIMITED ? "unlimited (as far as the file system goes)"
                                   : limit <= pf->size() ? ("the pool's size (" + format_bytes(limit) + "): it does not grow").c_str()
                                                         : format_bytes(limit).c_str());
  printf("  medium           %s\n", plat.medium.c_str());
  const char* why = "";
  if (!raw && plat.flush_insn == "none") {
    why = " (the CPU caches persist: no line is written back, the commit fences stay; docs/media.md)";
  } else if (!raw && plat.domain == "cpu-cache") {
    why = " (a page cache needs its write-back whatever the caches promise)";
  } else if (!raw && plat.medium == "x86") {
    why = " (then a fence: the caches are not promised to persist)";
  }
  printf("  flushes          %s%s\n", plat.flush_insn.c_str(), why);
  printf("  persistence      %s (%s%s%s)\n", plat.domain.c_str(), plat.source.c_str(),
         plat.detail.empty() ? "" : ": ", plat.detail.c_str());
  printf("  mapping          %s, %s pages\n",
         pf->on_device() ? "synchronous (device DAX)"
         : plat.synchronous ? "synchronous (MAP_SYNC)" : "not synchronous (no MAP_SYNC: page-cache write-back)",
         format_bytes(plat.page_size).c_str());
  printf("  uuid             %s\n", format_uuid(h.uuid).c_str());
  printf("  created          %s\n", format_time_ns(h.create_time_ns).c_str());
  printf("  lanes            %u x %s (log at offset %" PRIu64 ", %s)\n", h.lanes, format_bytes(h.lane_size).c_str(),
         h.log_offset, format_bytes(uint64_t{h.lanes} * h.lane_size).c_str());
  printf("  heap             %u chunks x %s in %u zone%s (%s)\n", pf->chunk_count(),
         format_bytes(h.chunk_size).c_str(), pf->zone_count(), pf->zone_count() == 1 ? "" : "s",
         format_bytes(uint64_t{pf->chunk_count()} * h.chunk_size).c_str());
  for (uint32_t i = 0; i < pf->zone_count(); ++i) {
    const Zone& z = pf->zone(i);
    printf("    zone %-3u       [%" PRIu64 ", %" PRIu64 "): %u chunks from offset %" PRIu64 "\n", i, z.offset, z.end,
           z.chunks, z.heap);
  }
  if (m->root_offset != 0)
    printf("  root             offset %" PRIu64 ", %s\n", m->root_offset, format_bytes(m->root_size).c_str());
  else
    printf("  root             none\n");
  printf("  retired seq      %" PRIu64 "\n", m->retired_seq);
  AllocatorStats st;
  if (Allocator::check(*pf, &st) != 0) return report_failure("heap is inconsistent");
  printf("  heap usage       %s allocated in %" PRIu64 " blocks and %" PRIu64 " extents; %" PRIu64
         " of %" PRIu64 " chunks free\n",
         format_bytes(st.allocated_bytes).c_str(), st.allocated_blocks, st.allocated_extents, st.free_chunks,
         uint64_t{pf->chunk_count()});
  return kExitOk;
}

int pool_check(const std::vector<std::string>& args) {
  Options opts({"engine", "medium"}, {});
  std::string err;
  if (!opts.parse(args, &err)) return usage_error(err, "pool check");
  if (opts.help()) return check_usage(stdout), kExitOk;
  if (opts.positional().size() != 1) return usage_error("pool check needs exactly one <path>", "pool check");
  sw_config cfg{};
  if (!apply_engine_medium(opts, &cfg)) return kExitUsage;
  const std::string& path = opts.positional()[0];
  if (int rc = recover_and_close(path, cfg, false)) {
    fprintf(stderr, "softwrap: %s: INCONSISTENT (cannot be opened)\n", path.c_str());
    return rc;
  }
  std::unique_ptr<PoolFile> pf = PoolFile::open(path);
  if (!pf) return report_failure("cannot open '" + path + "'");
  if (std::string problem = check_layout(*pf); !problem.empty()) {
    fprintf(stderr, "softwrap: %s: INCONSISTENT: %s\n", path.c_str(), problem.c_str());
    return kExitFailed;
  }
  AllocatorStats st;
  if (Allocator::check(*pf, &st) != 0) {
    fprintf(stderr, "softwrap: %s: INCONSISTENT: %s\n", path.c_str(), sw_errormsg());
    return kExitFailed;
  }
  printf("%s: consistent (%s allocated, %" PRIu64 " of %" PRIu64 " chunks free)\n", path.c_str(),
         format_bytes(st.allocated_bytes).c_str(), st.free_chunks, uint64_t{pf->chunk_count()});
  return kExitOk;
}

int pool_recover(const std::vector<std::string>& args) {
  Options opts({"engine", "medium"}, {});
  std::string err;
  if (!opts.parse(args, &err)) return usage_error(err, "pool recover");
  if (opts.help()) return recover_usage(stdout), kExitOk;
  if (opts.positional().size() != 1) return usage_error("pool recover needs exactly one <path>", "pool recover");
  sw_config cfg{};
  if (!apply_engine_medium(opts, &cfg)) return kExitUsage;
  return recover_and_close(opts.positional()[0], cfg, true);
}

struct Subcommand {
  const char* name;
  int (*run)(const std::vector<std::string>& args);
  void (*usage)(FILE* out);
};

const Subcommand kSubcommands[] = {
    {"create", pool_create, create_usage},
    {"info", pool_info, info_usage},
    {"check", pool_check, check_usage},
    {"recover", pool_recover, recover_usage},
};

}  // namespace

void pool_usage(FILE* out) {
  fprintf(out, "Usage: softwrap pool <create|info|check|recover> <path> [options]\n\n");
  for (const Subcommand& s : kSubcommands) {
    s.usage(out);
    fprintf(out, "\n");
  }
  fprintf(out,
          "Common options:\n"
          "  --engine E   softwrap | softwrap-local | undo | undo-themis | nonatomic (SOFTWRAP_ENGINE overrides)\n"
          "  --medium M   auto | x86 | msync | scm-emu (SOFTWRAP_MEDIUM overrides)\n");
}

int pool_command(const std::vector<std::string>& args) {
  if (args.empty()) return usage_error("pool needs a subcommand (create, info, check, recover)", "pool");
  if (args[0] == "--help" || args[0] == "-h") return pool_usage(stdout), kExitOk;
  for (const Subcommand& s : kSubcommands)
    if (args[0] == s.name) return s.run(std::vector<std::string>(args.begin() + 1, args.end()));
  return usage_error("unknown pool subcommand '" + args[0] + "'", "pool");
}

}  // namespace softwrap::cli
