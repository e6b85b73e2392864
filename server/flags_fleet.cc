// Fleet mode: Redis, and what the replicas share there.
// --help lists these flags under "fleet (Redis shared by the replicas)"
// (server/flags.cc).

#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "server/flag_groups.h"

ABSL_FLAG(std::string, redis_url, "",
          "fleet mode: redis://[[user]:password@]host[:port][/db] holding the "
          "cache, the flights and the NHTSA budget the replicas share "
          "(rediss:// for TLS; user and password percent-encoded, sent as "
          "AUTH; logged without the password); empty: this process alone");
ABSL_FLAG(std::string, redis_password_file, "",
          "fleet mode: a file whose one line is Redis's password (AUTH, with "
          "the user of --redis_url if it names one), kept out of the command "
          "line; not with a password in --redis_url");
ABSL_FLAG(std::string, redis_tls_ca_file, "",
          "rediss:// --redis_url: PEM CA certificates that may sign Redis's "
          "certificate (empty: the system's); its name or IP must be the "
          "host of --redis_url");
ABSL_FLAG(std::string, redis_tls_cert_file, "",
          "rediss:// --redis_url: PEM client certificate (chain) to present "
          "to a Redis with tls-auth-clients (with --redis_tls_key_file)");
ABSL_FLAG(std::string, redis_tls_key_file, "",
          "the PEM private key of --redis_tls_cert_file");
ABSL_FLAG(std::string, fleet_secret_file, "",
          "fleet mode: a file holding the fleet's secret (16 to 4096 bytes, "
          "the same on every replica): every event published and every "
          "decode stored in Redis is signed with HMAC-SHA256, and unsigned "
          "or badly signed ones are rejected; empty: unsigned (values are "
          "still checked)");
ABSL_FLAG(std::string, redis_key_prefix,
          "vin:", "prefix of every Redis key and channel of this fleet");
ABSL_FLAG(absl::Duration, redis_timeout, absl::Milliseconds(50),
          "longest wait on Redis (a command's answer; a new connection's "
          "connect, TLS handshake and greeting together); later counts as "
          "Redis being down");
ABSL_FLAG(absl::Duration, redis_connect_timeout, absl::Seconds(2),
          "fleet mode: at start, health is NOT_SERVING and calls wait (held, "
          "not failed) until Redis answers, for at most this; then the "
          "replica serves alone until Redis answers (0: serve at once)");
ABSL_FLAG(int, fleet_size_hint, 1,
          "replicas in the fleet: while Redis is down each one sends at most "
          "--upstream_rate / this");
ABSL_FLAG(absl::Duration, fleet_lease, absl::Seconds(5),
          "a flight's lease in Redis: a replica that dies leaves its flights "
          "to the others after at most this");

namespace server {

// Fleet mode: Redis, and what the replicas share there.
absl::Status FleetFromFlags(FleetOptions& fleet) {
  fleet.redis_url = absl::GetFlag(FLAGS_redis_url);
  fleet.redis_password_file = absl::GetFlag(FLAGS_redis_password_file);
  fleet.tls.ca_file = absl::GetFlag(FLAGS_redis_tls_ca_file);
  fleet.tls.cert_file = absl::GetFlag(FLAGS_redis_tls_cert_file);
  fleet.tls.key_file = absl::GetFlag(FLAGS_redis_tls_key_file);
  fleet.secret_file = absl::GetFlag(FLAGS_fleet_secret_file);
  fleet.key_prefix = absl::GetFlag(FLAGS_redis_key_prefix);
  fleet.timeout = absl::GetFlag(FLAGS_redis_timeout);
  fleet.connect_timeout = absl::GetFlag(FLAGS_redis_connect_timeout);
  if (fleet.connect_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--redis_connect_timeout must be a duration of 0 or more (e.g. 2s, "
        "300ms), got ",
        absl::FormatDuration(fleet.connect_timeout)));
  }
  fleet.size_hint = absl::GetFlag(FLAGS_fleet_size_hint);
  fleet.lease = absl::GetFlag(FLAGS_fleet_lease);
  return absl::OkStatus();
}

}  // namespace server
