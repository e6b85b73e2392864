// SHA-256 over OpenSSL's EVP interface, to fingerprint the snapshot file at
// load time.
#ifndef VIN_SNAPSHOT_SHA256_H_
#define VIN_SNAPSHOT_SHA256_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct evp_md_ctx_st;

namespace snapshot {

// Incremental hasher. Not thread-safe; one owner at a time.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  void Update(const void* data, size_t size);
  void Update(absl::string_view data) { Update(data.data(), data.size()); }
  // Finishes the hash and returns it as 64 lower-case hex digits. The object
  // must not be updated afterwards.
  std::string HexDigest();

 private:
  struct Free {
    void operator()(evp_md_ctx_st* ctx) const;
  };
  std::unique_ptr<evp_md_ctx_st, Free> ctx_;
};

// The sha256 of a whole file, as hex. NOT_FOUND / INTERNAL on I/O failure.
// `keep_going` is asked before every MiB read; a status it returns that is
// not OK ends the hash with that status.
absl::StatusOr<std::string> Sha256File(
    const std::string& path, absl::FunctionRef<absl::Status()> keep_going = [] {
      return absl::OkStatus();
    });

}  // namespace snapshot

#endif  // VIN_SNAPSHOT_SHA256_H_
