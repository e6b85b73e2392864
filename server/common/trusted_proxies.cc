#include "server/common/trusted_proxies.h"

#include <arpa/inet.h>

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace server {

bool TrustedProxies::AddressOf(absl::string_view text, Block* out) {
  text = absl::StripAsciiWhitespace(text);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  if (text.empty() || text.size() > 64) return false;
  const std::string s(text);
  *out = Block();
  in_addr v4;
  in6_addr v6;
  if (inet_pton(AF_INET, s.c_str(), &v4) == 1) {
    std::memcpy(out->address.data(), &v4, 4);
    out->prefix = 32;
    return true;
  }
  if (inet_pton(AF_INET6, s.c_str(), &v6) != 1) return false;
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0,    0,
                                          0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(&v6, kMapped, sizeof(kMapped)) == 0) {
    std::memcpy(out->address.data(), reinterpret_cast<const uint8_t*>(&v6) + 12,
                4);
    out->prefix = 32;
    return true;
  }
  std::memcpy(out->address.data(), &v6, 16);
  out->v6 = true;
  out->prefix = 128;
  return true;
}

absl::StatusOr<TrustedProxies> TrustedProxies::Parse(absl::string_view spec) {
  TrustedProxies out;
  for (absl::string_view entry :
       absl::StrSplit(spec, ',', absl::SkipWhitespace())) {
    entry = absl::StripAsciiWhitespace(entry);
    const size_t slash = entry.find('/');
    Block block;
    bool ok = AddressOf(entry.substr(0, slash), &block);
    if (ok && slash != absl::string_view::npos) {
      int prefix = -1;
      ok = absl::SimpleAtoi(entry.substr(slash + 1), &prefix) && prefix >= 0 &&
           prefix <= block.prefix;
      block.prefix = prefix;
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--trusted_proxies: \"", entry,
          "\" is not an IP address or a CIDR block (e.g. 10.0.0.0/8, ::1)"));
    }
    out.blocks_.push_back(block);
  }
  return out;
}

bool TrustedProxies::Match(const Block& block, const Block& address) {
  if (block.v6 != address.v6) return false;
  int bits = block.prefix;
  for (size_t i = 0; bits > 0; ++i, bits -= 8) {
    const uint8_t mask =
        bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((block.address[i] & mask) != (address.address[i] & mask)) return false;
  }
  return true;
}

bool TrustedProxies::Trusts(absl::string_view peer) const {
  Block address;
  if (blocks_.empty() || !AddressOf(peer, &address)) return false;
  for (const Block& b : blocks_) {
    if (Match(b, address)) return true;
  }
  return false;
}

std::string TrustedProxies::AddressOfGrpcPeer(absl::string_view peer) {
  // gRPC writes its peer as a URI (since 1.47: "ipv6:%5B::1%5D:5000"; before,
  // "ipv6:[::1]:5000"): percent-decoded first.
  const auto hex = [](char c) {
    return absl::ascii_isdigit(c) ? c - '0' : absl::ascii_tolower(c) - 'a' + 10;
  };
  std::string uri;
  for (size_t i = 0; i < peer.size(); ++i) {
    if (peer[i] == '%' && i + 2 < peer.size() &&
        absl::ascii_isxdigit(peer[i + 1]) &&
        absl::ascii_isxdigit(peer[i + 2])) {
      uri.push_back(
          static_cast<char>(hex(peer[i + 1]) * 16 + hex(peer[i + 2])));
      i += 2;
    } else {
      uri.push_back(peer[i]);
    }
  }
  absl::string_view rest, p = uri;
  if (absl::ConsumePrefix(&p, "ipv4:")) {
    rest = p.substr(0, p.rfind(':'));
  } else if (absl::ConsumePrefix(&p, "ipv6:")) {
    const size_t close = p.rfind(']');
    if (p.empty() || p[0] != '[' || close == absl::string_view::npos) return "";
    rest = p.substr(1, close - 1);
    // (An address with a zone id, "fe80::1%eth0", is no loopback or proxy
    // address of ours: AddressOf refuses it.)
  }
  return std::string(rest);
}

}  // namespace server
