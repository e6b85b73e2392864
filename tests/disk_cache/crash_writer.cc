// The disk cache's crash test helper: opens the store at argv[1], puts rows
// 0..argv[2]-1 and waits until they are committed ("ready <committed>"),
// then puts further rows without end, saying "more <committed>" each time
// about 500 more are committed, until it is killed.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/time/clock.h"
#include "disk_cache/disk_cache.h"
#include "disk_cache/test_rows.h"
#include "testing/eventually.h"

namespace {

// Polls the writer's progress (no other way to learn it from outside).
bool WaitCommitted(disk_cache::DiskCache& cache, uint64_t n) {
  return testing_util::Eventually([&] { return cache.stats().committed >= n; },
                                  absl::Seconds(60));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s PATH ROWS\n", argv[0]);
    return 2;
  }
  disk_cache::Options options;
  options.path = argv[1];
  options.commit_interval = absl::Milliseconds(5);
  options.batch_rows = 64;
  auto cache = disk_cache::DiskCache::Open(options, [](const std::string& w) {
    fprintf(stderr, "%s\n", w.c_str());
  });
  if (!cache.ok()) {
    fprintf(stderr, "%s\n", cache.status().ToString().c_str());
    return 1;
  }
  const int first = atoi(argv[2]);
  const absl::Time base = absl::Now();
  for (int i = 0; i < first; ++i) {
    (*cache)->Put(disk_cache_test::TestRow(i, base));
  }
  if (!WaitCommitted(**cache, static_cast<uint64_t>(first))) return 3;
  uint64_t said = (*cache)->stats().committed;
  printf("ready %llu\n", static_cast<unsigned long long>(said));
  fflush(stdout);
  for (int i = first;; ++i) {
    (*cache)->Put(disk_cache_test::TestRow(i, base));
    const uint64_t committed = (*cache)->stats().committed;
    if (committed >= said + 500) {
      said = committed;
      printf("more %llu\n", static_cast<unsigned long long>(committed));
      fflush(stdout);
    }
  }
}
