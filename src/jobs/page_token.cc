#include "jobs/page_token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace jobs {
namespace {

constexpr size_t kPositionBytes = 8;
constexpr size_t kMacBytes = 16;

}  // namespace

std::string NewJobId() {
  unsigned char bits[16];
  if (RAND_bytes(bits, sizeof(bits)) != 1) std::abort();  // no safe id
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bits), sizeof(bits)));
}

bool IsJobIdShaped(absl::string_view id) {
  if (id.size() != 32) return false;
  for (char c : id) {
    if (!absl::ascii_isdigit(c) && (c < 'a' || c > 'f')) return false;
  }
  return true;
}

std::string PageTokens::Mac(absl::string_view scope,
                            absl::string_view position) const {
  const std::string message = absl::StrCat(scope, "\n", position);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(),
       mac, &len);
  return std::string(reinterpret_cast<const char*>(mac), kMacBytes);
}

std::string PageTokens::Issue(absl::string_view scope, int64_t position) const {
  std::string raw(kPositionBytes, '\0');
  uint64_t p = static_cast<uint64_t>(position);
  for (size_t i = 0; i < kPositionBytes; ++i) {
    raw[kPositionBytes - 1 - i] = static_cast<char>(p & 0xff);
    p >>= 8;
  }
  raw += Mac(scope, raw.substr(0, kPositionBytes));
  return absl::WebSafeBase64Escape(raw);
}

absl::StatusOr<int64_t> PageTokens::Check(absl::string_view scope,
                                          absl::string_view token) const {
  const absl::Status refused = absl::InvalidArgumentError(
      "page_token was not issued for this list: pass \"\" for the first "
      "page, then the next_page_token of the page before");
  std::string raw;
  if (token.size() > 64 || !absl::WebSafeBase64Unescape(token, &raw) ||
      raw.size() != kPositionBytes + kMacBytes) {
    return refused;
  }
  const std::string mac = Mac(scope, raw.substr(0, kPositionBytes));
  if (CRYPTO_memcmp(mac.data(), raw.data() + kPositionBytes, kMacBytes) != 0) {
    return refused;
  }
  uint64_t p = 0;
  for (size_t i = 0; i < kPositionBytes; ++i) {
    p = (p << 8) | static_cast<unsigned char>(raw[i]);
  }
  if (static_cast<int64_t>(p) < 0) return refused;
  return static_cast<int64_t>(p);
}

}  // namespace jobs
