// --trusted_proxies (DESIGN rule 19): the peers whose tenant header is
// believed, as a list of CIDR blocks ("127.0.0.0/8,::1/128,10.1.2.3").
// An IPv4-mapped IPv6 peer (::ffff:10.1.2.3) is matched as its IPv4
// address. Immutable once parsed: safe from any thread.
#ifndef VIN_SERVER_COMMON_TRUSTED_PROXIES_H_
#define VIN_SERVER_COMMON_TRUSTED_PROXIES_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace server {

class TrustedProxies {
 public:
  // The default: loopback only (127.0.0.0/8 and ::1).
  static constexpr absl::string_view kLoopback = "127.0.0.0/8,::1/128";

  // Trusts nobody.
  TrustedProxies() = default;

  // `spec`: comma-separated addresses or CIDR blocks ("" trusts nobody).
  // INVALID_ARGUMENT names the bad entry.
  static absl::StatusOr<TrustedProxies> Parse(absl::string_view spec);

  // Whether `peer` (an IP address as text: "10.1.2.3", "::1",
  // "[::1]") is in one of the blocks. Anything else is not.
  bool Trusts(absl::string_view peer) const;

  // The peer address of a gRPC peer string ("ipv4:127.0.0.1:5000",
  // "ipv6:[::1]:5000"); "" for other transports.
  static std::string AddressOfGrpcPeer(absl::string_view peer);

 private:
  struct Block {
    std::array<uint8_t, 16> address{};  // IPv4 in the first 4 bytes
    bool v6 = false;
    int prefix = 0;
  };
  static bool Match(const Block& block, const Block& address);
  // `text` as an address (prefix: its full length); false when it is none.
  static bool AddressOf(absl::string_view text, Block* out);

  std::vector<Block> blocks_;
};

}  // namespace server

#endif  // VIN_SERVER_COMMON_TRUSTED_PROXIES_H_
