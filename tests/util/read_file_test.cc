#include "util/read_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace util {
namespace {

class ReadSmallFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vin-read-file-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::system(absl::StrCat("rm -rf ", dir_).c_str());
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(ReadSmallFileTest, AFileOfBoundedSizeIsReadWhole) {
  const std::string path = Write("cert.pem", "-----BEGIN-----\nabc\n");
  auto text = ReadSmallFile(path, "the TLS certificate (--tls_cert_file)");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "-----BEGIN-----\nabc\n");
  auto exact = ReadSmallFile(Write("ten", std::string(10, 'x')), "it", 10);
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(exact->size(), 10u);
}

TEST_F(ReadSmallFileTest, ALargerFileIsRefusedNamingTheFlagAndTheLimit) {
  const std::string path = Write("big.pem", std::string(11, 'x'));
  auto text = ReadSmallFile(path, "--tls_cert_file", 10);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(text.status().message(), "--tls_cert_file"));
  EXPECT_TRUE(absl::StrContains(text.status().message(), path));
  EXPECT_TRUE(
      absl::StrContains(text.status().message(), "larger than 10 bytes"))
      << text.status();
}

TEST_F(ReadSmallFileTest, AFifoIsRefusedWithoutWaitingForAWriter) {
  // Nothing ever writes to it: a read (or a blocking open) would never end.
  const std::string path = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  auto text = ReadSmallFile(path, "--http_tls_key_file");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(text.status().message(), "not a regular file"))
      << text.status();
}

TEST_F(ReadSmallFileTest, ADeviceThatNeverEndsIsRefused) {
  auto text = ReadSmallFile("/dev/zero", "--tls_client_ca_file");
  ASSERT_FALSE(text.ok());
  EXPECT_TRUE(absl::StrContains(text.status().message(), "not a regular file"))
      << text.status();
}

TEST_F(ReadSmallFileTest, MissingEmptyAndDirectoryAreNamed) {
  auto missing = ReadSmallFile(dir_ + "/none", "--tls_cert_file");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  auto empty = ReadSmallFile(Write("empty", ""), "--tls_cert_file");
  EXPECT_TRUE(absl::StrContains(empty.status().message(), "is empty"))
      << empty.status();
  auto dir = ReadSmallFile(dir_, "--tls_cert_file");
  EXPECT_TRUE(absl::StrContains(dir.status().message(), "not a regular file"))
      << dir.status();
}

}  // namespace
}  // namespace util
