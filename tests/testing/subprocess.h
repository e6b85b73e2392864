// Runs a program of the build (vin-server) as a child process for tests:
// its stdout and stderr are read line by line on a thread of their own, so
// a test can wait for a line, signal the process and collect its exit.
#ifndef VIN_TESTS_TESTING_SUBPROCESS_H_
#define VIN_TESTS_TESTING_SUBPROCESS_H_

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"

extern char** environ;

namespace testing_util {

class Subprocess {
 public:
  // Starts `argv[0]` with `argv`; false when it cannot be started.
  bool Start(const std::vector<std::string>& argv) {
    int fds[2];
    if (pipe(fds) != 0) return false;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(),
                               environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) {
      close(fds[0]);
      return false;
    }
    reader_ = std::thread([this, fd = fds[0]] { ReadLines(fd); });
    return true;
  }

  ~Subprocess() {
    if (pid_ > 0 && !exit_status_) {
      kill(pid_, SIGKILL);
      Wait(absl::Seconds(10));
    }
    if (reader_.joinable()) reader_.join();
  }

  // The first line matching `pattern` (ECMAScript regex) seen so far or
  // within `timeout`.
  absl::optional<std::string> WaitForLine(const std::string& pattern,
                                          absl::Duration timeout) {
    const std::regex re(pattern);
    absl::MutexLock lock(&mu_);
    size_t next = 0;
    const absl::Time give_up = absl::Now() + timeout;
    auto more = [this, &next]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return lines_.size() > next || eof_;
    };
    while (true) {
      for (; next < lines_.size(); ++next) {
        if (std::regex_search(lines_[next], re)) return lines_[next];
      }
      if (eof_ || !mu_.AwaitWithDeadline(absl::Condition(&more), give_up)) {
        return absl::nullopt;
      }
    }
  }

  // Whether `count` output lines matching `pattern` (ECMAScript regex) are
  // seen by `deadline` (at once when they are in already).
  bool WaitForLines(const std::string& pattern, int count,
                    absl::Time deadline) {
    const std::regex re(pattern);
    absl::MutexLock lock(&mu_);
    size_t next = 0;
    int seen = 0;
    auto more = [this, &next]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return lines_.size() > next || eof_;
    };
    while (true) {
      for (; next < lines_.size(); ++next) {
        seen += std::regex_search(lines_[next], re) ? 1 : 0;
      }
      if (seen >= count) return true;
      if (eof_ || !mu_.AwaitWithDeadline(absl::Condition(&more), deadline)) {
        return false;
      }
    }
  }

  void Signal(int sig) { kill(pid_, sig); }
  pid_t pid() const { return pid_; }

  // Keeps only the output lines matching `pattern` (ECMAScript regex), for
  // long runs of a chatty program; call before Start.
  void KeepLinesMatching(const std::string& pattern) {
    keep_ = std::regex(pattern);
  }
  // Keeps no output line (still read, so the program never blocks on it);
  // call before Start.
  void DiscardLines() { discard_ = true; }

  // The exit status (WEXITSTATUS; -signal when killed by one), or nullopt
  // if the process has not ended within `timeout`.
  absl::optional<int> Wait(absl::Duration timeout) {
    if (exit_status_) return exit_status_;
    // A pidfd becomes readable when the child ends: poll it with the timeout.
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      const int ms = static_cast<int>(absl::ToInt64Milliseconds(timeout));
      const int ready = poll(&p, 1, ms);
      close(pidfd);
      if (ready <= 0) return absl::nullopt;
    }
    int status = 0;
    if (waitpid(pid_, &status, pidfd >= 0 ? 0 : WNOHANG) != pid_) {
      return absl::nullopt;
    }
    exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    return exit_status_;
  }

  // Every output line kept, once the program has closed its output (at its
  // exit, usually), or those seen so far when `timeout` passes first.
  std::vector<std::string> LinesAtEnd(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&eof_), timeout);
    return lines_;
  }

  std::vector<std::string> lines() const {
    absl::MutexLock lock(&mu_);
    return lines_;
  }

 private:
  void ReadLines(int fd) {
    FILE* in = fdopen(fd, "r");
    char* buf = nullptr;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&buf, &cap, in)) > 0) {
      std::string line(buf, static_cast<size_t>(n));
      if (!line.empty() && line.back() == '\n') line.pop_back();
      if (discard_ || (keep_ && !std::regex_search(line, *keep_))) continue;
      absl::MutexLock lock(&mu_);
      lines_.push_back(std::move(line));
    }
    free(buf);
    fclose(in);
    absl::MutexLock lock(&mu_);
    eof_ = true;
  }

  pid_t pid_ = -1;
  absl::optional<std::regex> keep_;  // set before the reader starts
  bool discard_ = false;             // set before the reader starts
  absl::optional<int> exit_status_;
  std::thread reader_;
  mutable absl::Mutex mu_;
  std::vector<std::string> lines_ ABSL_GUARDED_BY(mu_);
  bool eof_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_SUBPROCESS_H_
