// Certificates made at test time with the openssl command (never committed
// keys): a CA, a server certificate for 127.0.0.1/localhost and a client
// certificate signed by it, a second server certificate from the same CA
// (another CN and serial: a renewed one, for reload tests), a client
// certificate whose subject has several parts and a comma, a second CA
// that signed nothing the server trusts (but a client's and a server's
// certificate of its own), and a server certificate of the test CA for
// another name.
#ifndef VIN_TESTS_TESTING_TEST_CERTS_H_
#define VIN_TESTS_TESTING_TEST_CERTS_H_

#include <stdlib.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace testing_util {

struct TestCerts {
  std::string dir;
  std::string ca, server_cert, server_key, client_cert, client_key;
  std::string other_ca, other_client_cert, other_client_key;
  // Servers for 127.0.0.1 signed by the other CA, and one signed by the
  // test CA for another name only (elsewhere.example).
  std::string other_server_cert, other_server_key;
  std::string misnamed_server_cert, misnamed_server_key;
  std::string server2_cert, server2_key;  // CN=server2, same CA
  // Subject "/C=US/O=Acme, Inc./CN=web": as gRPC and the gateway write it,
  // kAcmeSubject.
  std::string acme_cert, acme_key;
  static constexpr char kAcmeSubject[] = "CN=web,O=Acme\\, Inc.,C=US";

  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

// Makes the certificates in a new temporary directory. Fails the test (and
// returns empty paths) when openssl is missing or fails.
inline TestCerts MakeTestCerts() {
  TestCerts c;
  char tmpl[] = "/tmp/vin-certs.XXXXXX";
  const char* dir = mkdtemp(tmpl);
  if (dir == nullptr) {
    ADD_FAILURE() << "mkdtemp failed";
    return c;
  }
  c.dir = dir;
  const std::string d = c.dir;
  // One shell script, so the certificates and their extensions stay
  // together; -batch and -subj keep openssl from asking anything.
  const std::string script = absl::StrCat(
      "set -e; cd ", d, "\n",
      "ca() { openssl req -x509 -newkey ec -pkeyopt "
      "ec_paramgen_curve:prime256v1 -nodes -days 2 -batch "
      "-subj \"/CN=$1\" -keyout $1.key -out $1.pem 2>/dev/null; }\n",
      "leaf() { openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
      "-nodes -batch "
      "-subj \"${4:-/CN=$1}\" -keyout $1.key -out $1.csr 2>/dev/null; "
      "printf '%s\\n' \"$3\" > $1.ext; "
      "openssl x509 -req -in $1.csr -CA $2.pem -CAkey $2.key -CAcreateserial "
      "-days 2 -extfile $1.ext -out $1.pem 2>/dev/null; }\n",
      "ca test-ca; ca other-ca\n",
      "leaf server test-ca 'subjectAltName=IP:127.0.0.1,DNS:localhost'\n",
      "leaf client test-ca 'extendedKeyUsage=clientAuth'\n",
      "leaf other-client other-ca 'extendedKeyUsage=clientAuth'\n",
      "leaf other-server other-ca "
      "'subjectAltName=IP:127.0.0.1,DNS:localhost'\n",
      "leaf misnamed-server test-ca 'subjectAltName=DNS:elsewhere.example'\n",
      "leaf server2 test-ca 'subjectAltName=IP:127.0.0.1,DNS:localhost'\n",
      "leaf acme test-ca 'extendedKeyUsage=clientAuth' '/C=US/O=Acme, "
      "Inc./CN=web'\n");
  const std::string sh = d + "/make.sh";
  std::ofstream(sh) << script;
  const int rc = std::system(absl::StrCat("bash ", sh).c_str());
  if (rc != 0) {
    ADD_FAILURE() << "openssl could not make the test certificates (is the "
                     "openssl command installed? scripts/setup.sh installs it)";
    return c;
  }
  c.ca = d + "/test-ca.pem";
  c.server_cert = d + "/server.pem";
  c.server_key = d + "/server.key";
  c.client_cert = d + "/client.pem";
  c.client_key = d + "/client.key";
  c.other_ca = d + "/other-ca.pem";
  c.other_client_cert = d + "/other-client.pem";
  c.other_client_key = d + "/other-client.key";
  c.other_server_cert = d + "/other-server.pem";
  c.other_server_key = d + "/other-server.key";
  c.misnamed_server_cert = d + "/misnamed-server.pem";
  c.misnamed_server_key = d + "/misnamed-server.key";
  c.server2_cert = d + "/server2.pem";
  c.server2_key = d + "/server2.key";
  c.acme_cert = d + "/acme.pem";
  c.acme_key = d + "/acme.key";
  return c;
}

inline void RemoveTestCerts(const TestCerts& c) {
  if (!c.dir.empty()) std::system(absl::StrCat("rm -rf ", c.dir).c_str());
}

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_TEST_CERTS_H_
