#include "snapshot/sha256.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace snapshot {

void Sha256::Free::operator()(evp_md_ctx_st* ctx) const { EVP_MD_CTX_free(ctx); }

// EVP's calls fail only when memory runs out; that aborts, as any
// allocation failure does.
Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1) {
    std::abort();
  }
}

Sha256::~Sha256() = default;

void Sha256::Update(const void* data, size_t size) {
  if (EVP_DigestUpdate(ctx_.get(), data, size) != 1) std::abort();
}

std::string Sha256::HexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(ctx_.get(), digest, &length) != 1) std::abort();
  return absl::BytesToHexString(absl::string_view(
      reinterpret_cast<const char*>(digest), length));
}

absl::StatusOr<std::string> Sha256File(
    const std::string& path, absl::FunctionRef<absl::Status()> keep_going) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"),
                                             &std::fclose);
  if (file == nullptr) {
    const int err = errno;
    const std::string message =
        absl::StrCat("cannot open ", path, ": ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(message)
                         : absl::InternalError(message);
  }
  Sha256 hasher;
  std::vector<char> buffer(1 << 20);
  size_t n;
  do {
    if (absl::Status s = keep_going(); !s.ok()) return s;
    n = std::fread(buffer.data(), 1, buffer.size(), file.get());
    hasher.Update(buffer.data(), n);
  } while (n > 0);
  if (std::ferror(file.get())) {
    return absl::InternalError(absl::StrCat("cannot read ", path));
  }
  return hasher.HexDigest();
}

}  // namespace snapshot
