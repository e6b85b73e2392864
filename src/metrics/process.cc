#include "metrics/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace metrics {
namespace {

// At most `max` bytes of a /proc file ("" when it cannot be read).
std::string ReadProc(const char* path, size_t max) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out(max, '\0');
  size_t got = 0;
  while (got < max) {
    const ssize_t n = ::read(fd, &out[got], max - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

absl::optional<double> CountOpenFds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return absl::nullopt;
  double n = 0;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(dir);
  return n - 1;  // the directory's own descriptor
}

}  // namespace

absl::optional<StatFields> ParseProcStat(absl::string_view stat, long ticks,
                                         long page_size) {
  // "pid (comm) state ...": comm may hold spaces and parentheses; the
  // fields after the last ')' are numbered from 3 (state).
  const size_t close = stat.rfind(')');
  if (close == absl::string_view::npos || ticks <= 0 || page_size <= 0) {
    return absl::nullopt;
  }
  const std::vector<absl::string_view> f =
      absl::StrSplit(stat.substr(close + 1), ' ', absl::SkipEmpty());
  // f[0] is field 3; utime 14, stime 15, starttime 22, rss 24.
  if (f.size() < 22) return absl::nullopt;
  double utime, stime, start, rss;
  if (!absl::SimpleAtod(f[11], &utime) || !absl::SimpleAtod(f[12], &stime) ||
      !absl::SimpleAtod(f[19], &start) || !absl::SimpleAtod(f[21], &rss)) {
    return absl::nullopt;
  }
  StatFields out;
  out.cpu_seconds = (utime + stime) / static_cast<double>(ticks);
  out.start_seconds_after_boot = start / static_cast<double>(ticks);
  out.resident_bytes = rss * static_cast<double>(page_size);
  return out;
}

absl::optional<double> ParseBootTime(absl::string_view proc_stat) {
  for (absl::string_view line : absl::StrSplit(proc_stat, '\n')) {
    if (!absl::ConsumePrefix(&line, "btime ")) continue;
    double t;
    if (absl::SimpleAtod(line, &t)) return t;
  }
  return absl::nullopt;
}

ProcessStats ReadProcessStats() {
  ProcessStats s;
  const absl::optional<StatFields> f =
      ParseProcStat(ReadProc("/proc/self/stat", 4096), ::sysconf(_SC_CLK_TCK),
                    ::sysconf(_SC_PAGESIZE));
  if (f) {
    s.cpu_seconds = f->cpu_seconds;
    s.resident_bytes = f->resident_bytes;
    // The boot time never changes: read once (after the per-CPU and
    // interrupt lines, which can be long on a large machine).
    static const absl::optional<double> boot =
        ParseBootTime(ReadProc("/proc/stat", 4 * 1024 * 1024));
    if (boot) s.start_time_seconds = *boot + f->start_seconds_after_boot;
  }
  s.open_fds = CountOpenFds();
  return s;
}

}  // namespace metrics
