// The seal on what a replica writes to Redis (fleet/seal.h), and the files
// its secrets come from (fleet/secret_file.h).
#include "fleet/seal.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "fleet/secret_file.h"
#include "gtest/gtest.h"
#include "vin/fleet/v1/fleet.pb.h"

namespace fleet {
namespace {

const absl::Time kIssued = absl::FromUnixMillis(1796300000123);

std::shared_ptr<const FleetSecret> Secret(const std::string& key) {
  auto s = FleetSecret::Create(key);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : nullptr;
}

// A FleetEvent's bytes: a payload like the ones sealed in production.
std::string Payload() {
  vin::fleet::v1::FleetEvent e;
  e.set_kind(vin::fleet::v1::FleetEvent::KIND_ABANDONED);
  e.set_key("1HGCM82633A004352|0");
  e.set_origin("r1");
  return e.SerializeAsString();
}

TEST(FleetSeal, OpensToWhatWasSealedAndReadersSkipIt) {
  const auto secret = Secret("0123456789abcdef-fleet");
  for (const FleetSecret* s :
       {static_cast<const FleetSecret*>(nullptr), secret.get()}) {
    const std::string sealed = Seal(Payload(), "vin:events", kIssued, s);
    auto opened = OpenSeal(sealed);
    ASSERT_TRUE(opened.ok()) << opened.status();
    EXPECT_TRUE(opened->sealed);
    EXPECT_EQ(opened->payload, Payload());
    EXPECT_EQ(opened->key, "vin:events");
    EXPECT_EQ(opened->issued_unix_ms, absl::ToUnixMillis(kIssued));
    EXPECT_EQ(opened->mac.empty(), s == nullptr);
    // A reader that knows nothing of seals reads the event as it was.
    vin::fleet::v1::FleetEvent e;
    ASSERT_TRUE(e.ParseFromString(sealed));
    EXPECT_EQ(e.origin(), "r1");
  }
  // Unsealed bytes open as themselves.
  const std::string payload = Payload();
  auto plain = OpenSeal(payload);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->sealed);
  EXPECT_EQ(plain->payload, payload);
}

TEST(FleetSeal, BadFormsDoNotOpen) {
  const std::string sealed = Seal(Payload(), "k", kIssued, nullptr);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"\xff\xff\xff garbage", "not protobuf"},
      {sealed.substr(0, sealed.size() - 1), "a seal cut short"},
      {sealed + Payload(), "a field after the seal"},
      {Seal(sealed, "k", kIssued, nullptr), "a field after the seal"},
      // Field 2047 as a varint, and a seal whose body is not a Seal.
      {std::string("\xf8\x7f\x01", 3), "wrong wire type"},
      {std::string("\xfa\x7f\x02\xff\xff", 5), "does not parse"},
  };
  for (const auto& [bytes, says] : cases) {
    auto opened = OpenSeal(bytes);
    ASSERT_FALSE(opened.ok()) << says;
    EXPECT_NE(opened.status().message().find(says), absl::string_view::npos)
        << opened.status();
  }
}

TEST(FleetSeal, TheMacHoldsOnlyForTheSameSecretKeyTimeAndBytes) {
  const auto secret = Secret("0123456789abcdef-fleet");
  const auto other = Secret("0123456789abcdef-other");
  const std::string sealed =
      Seal(Payload(), "vin:result:K|0", kIssued, secret.get());
  auto opened = OpenSeal(sealed);
  ASSERT_TRUE(opened.ok());
  struct Case {
    std::string name;
    Opened value;
    std::string key;
    const FleetSecret* secret;
    bool matches;
  };
  Opened other_bytes = *opened;
  const std::string changed = Payload() + std::string("\x08\x01", 2);
  other_bytes.payload = changed;
  Opened other_time = *opened;
  other_time.issued_unix_ms += 1;
  Opened unsigned_ = *opened;
  unsigned_.mac.clear();
  Opened short_mac = *opened;
  short_mac.mac.pop_back();
  const std::vector<Case> cases = {
      {"as sealed", *opened, "vin:result:K|0", secret.get(), true},
      {"another key", *opened, "vin:result:L|0", secret.get(), false},
      {"another secret", *opened, "vin:result:K|0", other.get(), false},
      {"other bytes", other_bytes, "vin:result:K|0", secret.get(), false},
      {"another time", other_time, "vin:result:K|0", secret.get(), false},
      {"no MAC", unsigned_, "vin:result:K|0", secret.get(), false},
      {"a MAC cut short", short_mac, "vin:result:K|0", secret.get(), false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(MacMatches(c.value, c.key, *c.secret), c.matches) << c.name;
  }
  EXPECT_EQ(opened->mac.size(), 32u) << "HMAC-SHA256";
}

TEST(FleetSeal, ASecretIsLongEnough) {
  EXPECT_FALSE(FleetSecret::Create("short").ok());
  EXPECT_FALSE(
      FleetSecret::Create(std::string(kMinFleetSecretBytes - 1, 'x')).ok());
  EXPECT_TRUE(FleetSecret::Create(std::string(kMinFleetSecretBytes, 'x')).ok());
}

// A file of the test's own with `content`, removed at the end.
class TempFile {
 public:
  explicit TempFile(const std::string& content) {
    char tmpl[] = "/tmp/vin-secret.XXXXXX";
    const int fd = mkstemp(tmpl);
    path_ = tmpl;
    if (fd >= 0) {
      (void)!write(fd, content.data(), content.size());
      close(fd);
    }
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(SecretFile, APasswordIsTheFilesOneLine) {
  const std::vector<std::pair<std::string, std::string>> good = {
      {"s3cret\n", "s3cret"},
      {"s3cret\r\n", "s3cret"},
      {"s3cret", "s3cret"},
      {"with spaces and @:%\n", "with spaces and @:%"},
  };
  for (const auto& [content, password] : good) {
    TempFile f(content);
    auto p = ReadPasswordFile(f.path(), "--redis_password_file");
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(*p, password);
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "is empty"},
      {"\n", "holds no password"},
      {"one\ntwo\n", "more than one line"},
      {"one\n\n", "more than one line"},
      {std::string("a\0b", 3), "NUL"},
      {std::string(kMaxSecretFileBytes + 1, 'x'), "larger than"},
  };
  for (const auto& [content, says] : bad) {
    TempFile f(content);
    auto p = ReadPasswordFile(f.path(), "--redis_password_file");
    ASSERT_FALSE(p.ok()) << says;
    EXPECT_NE(p.status().message().find(says), absl::string_view::npos)
        << p.status();
    EXPECT_NE(p.status().message().find("--redis_password_file"),
              absl::string_view::npos);
    EXPECT_EQ(p.status().message().find("two"), absl::string_view::npos)
        << "the file's text is not shown";
  }
  auto missing =
      ReadPasswordFile("/nonexistent/vin-password", "--redis_password_file");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(ReadPasswordFile("/tmp", "--redis_password_file").ok())
      << "a directory";
}

TEST(SecretFile, AFleetSecretIsBytesOfABoundedSize) {
  TempFile good(std::string("\x01\x02\x03\n", 4) + std::string(20, 'k') + "\n");
  auto s = ReadFleetSecretFile(good.path(), "--fleet_secret_file");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->size(), 24u)
      << "binary bytes kept, one trailing newline trimmed";
  TempFile short_(std::string(kMinFleetSecretBytes - 1, 'k') + "\n");
  auto t = ReadFleetSecretFile(short_.path(), "--fleet_secret_file");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("needs at least"),
            absl::string_view::npos);
  TempFile large(std::string(kMaxSecretFileBytes + 1, 'k'));
  EXPECT_FALSE(ReadFleetSecretFile(large.path(), "--fleet_secret_file").ok());
}

}  // namespace
}  // namespace fleet
