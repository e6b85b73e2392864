#include "fleet/seal.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "fleet/secret_file.h"
#include "vin/fleet/v1/fleet.pb.h"

namespace fleet {
namespace {

using google::protobuf::internal::WireFormatLite;

constexpr absl::string_view kDomain = "vin.fleet.v1.Seal";

void AppendBigEndian(uint64_t v, int bytes, std::string* out) {
  for (int i = bytes - 1; i >= 0; --i) {
    out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
}

absl::Status Bad(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("sealed value: ", why));
}

}  // namespace

absl::StatusOr<std::shared_ptr<const FleetSecret>> FleetSecret::Create(
    std::string key) {
  if (key.size() < kMinFleetSecretBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a fleet secret needs at least ", kMinFleetSecretBytes,
                     " bytes, got ", key.size()));
  }
  return std::shared_ptr<const FleetSecret>(new FleetSecret(std::move(key)));
}

std::string FleetSecret::Mac(absl::string_view key, int64_t issued_unix_ms,
                             absl::string_view payload) const {
  std::string data;
  data.reserve(kDomain.size() + 4 + key.size() + 8 + payload.size());
  data.append(kDomain.data(), kDomain.size());
  AppendBigEndian(key.size(), 4, &data);
  data.append(key.data(), key.size());
  AppendBigEndian(static_cast<uint64_t>(issued_unix_ms), 8, &data);
  data.append(payload.data(), payload.size());
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(),
           mac, &len) == nullptr) {
    return std::string();  // matches nothing: every value is rejected
  }
  return std::string(reinterpret_cast<const char*>(mac), len);
}

std::string Seal(absl::string_view payload, absl::string_view key,
                 absl::Time issued, const FleetSecret* secret) {
  vin::fleet::v1::Seal seal;
  seal.set_key(std::string(key));
  seal.set_issued_unix_ms(absl::ToUnixMillis(issued));
  if (secret != nullptr) {
    seal.set_mac(secret->Mac(key, seal.issued_unix_ms(), payload));
  }
  using google::protobuf::io::CodedOutputStream;
  const std::string body = seal.SerializeAsString();
  uint8_t head[10];  // two varints of at most 5 bytes
  uint8_t* end = CodedOutputStream::WriteVarint32ToArray(
      WireFormatLite::MakeTag(kSealField,
                              WireFormatLite::WIRETYPE_LENGTH_DELIMITED),
      head);
  end = CodedOutputStream::WriteVarint32ToArray(
      static_cast<uint32_t>(body.size()), end);
  std::string out;
  out.reserve(payload.size() + (end - head) + body.size());
  out.append(payload.data(), payload.size());
  out.append(reinterpret_cast<const char*>(head), end - head);
  out.append(body);
  return out;
}

absl::StatusOr<Opened> OpenSeal(absl::string_view bytes) {
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t*>(bytes.data()),
      static_cast<int>(bytes.size()));
  Opened opened;
  opened.payload = bytes;
  while (true) {
    const int start = in.CurrentPosition();
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    if (opened.sealed) return Bad("a field after the seal");
    if (WireFormatLite::GetTagFieldNumber(tag) != kSealField) {
      if (!WireFormatLite::SkipField(&in, tag)) return Bad("not protobuf");
      continue;
    }
    if (WireFormatLite::GetTagWireType(tag) !=
        WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      return Bad("a seal of the wrong wire type");
    }
    uint32_t len = 0;
    std::string body;
    if (!in.ReadVarint32(&len) ||
        !in.ReadString(&body, static_cast<int>(len))) {
      return Bad("a seal cut short");
    }
    vin::fleet::v1::Seal seal;
    if (!seal.ParseFromString(body)) return Bad("a seal that does not parse");
    opened.sealed = true;
    opened.payload = bytes.substr(0, static_cast<size_t>(start));
    opened.key = seal.key();
    opened.issued_unix_ms = seal.issued_unix_ms();
    opened.mac = seal.mac();
  }
  if (in.CurrentPosition() != static_cast<int>(bytes.size())) {
    return Bad("not protobuf");
  }
  return opened;
}

bool MacMatches(const Opened& opened, absl::string_view key,
                const FleetSecret& secret) {
  if (opened.mac.empty()) return false;
  const std::string want =
      secret.Mac(key, opened.issued_unix_ms, opened.payload);
  return want.size() == opened.mac.size() &&
         CRYPTO_memcmp(want.data(), opened.mac.data(), want.size()) == 0;
}

}  // namespace fleet
