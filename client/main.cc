// vinctl: the command-line client of vin.v1.VinDecoderService.
//
// Flags are absl flags, parsed here by a small loop over absl's flag registry
// rather than absl::ParseCommandLine, because that one exits with status 1 on
// a bad flag, and 1 means "an item failed" for vinctl: usage errors are 2.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "domain/limits.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/batch.h"
#include "client/credentials.h"
#include "client/decode_command.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "address:port of vin-server");
ABSL_FLAG(absl::Duration, deadline, absl::ZeroDuration(),
          "decode: per call (default 30s); batch: whole stream (default 0, "
          "none)");
ABSL_FLAG(int32_t, model_year, 0, "model-year hint; 0 = none");
ABSL_FLAG(bool, json, false, "decode: print the result as JSON");
ABSL_FLAG(bool, warn_check_digit, false,
          "decode a VIN whose check digit is wrong, with a note");
ABSL_FLAG(std::string, in, "-", "batch: input file, - for stdin");
ABSL_FLAG(std::string, out, "-", "batch: output file, - for stdout");
ABSL_FLAG(std::string, format, "csv", "batch: output format, csv or ndjson");
ABSL_FLAG(int32_t, window, 512,
          "batch: records sent but not yet written out, at most");
ABSL_FLAG(absl::Duration, stagger, absl::ZeroDuration(),
          "longest random delay before the first send");
ABSL_FLAG(std::string, tls_ca_file, "",
          "PEM CA bundle that signed the server's certificate: connect with TLS");
ABSL_FLAG(std::string, tls_cert_file, "",
          "PEM client certificate, for a server that asks for one (mTLS)");
ABSL_FLAG(std::string, tls_key_file, "", "PEM private key of --tls_cert_file");

namespace {

constexpr char kUsage[] =
    R"(vinctl: command-line client of the VIN decode service (vin.v1.VinDecoderService)

Usage:
  vinctl decode VIN [--model-year=Y] [--json] [--warn-check-digit]
                    [--server=ADDR] [--deadline=DUR] [--stagger=DUR]
                    [--tls-ca-file=PEM [--tls-cert-file=PEM --tls-key-file=PEM]]
  vinctl batch [--in=FILE|-] [--out=FILE|-] [--format=csv|ndjson]
               [--window=N] [--model-year=Y] [--warn-check-digit]
               [--server=ADDR] [--deadline=DUR] [--stagger=DUR]
               [--tls-ca-file=PEM [--tls-cert-file=PEM --tls-key-file=PEM]]

decode  Decodes one VIN and prints the vehicle (or, with --json, the
        vin.v1.DecodeResult in protobuf's JSON mapping with proto field names).

batch   Streams a feed through DecodeBatch and writes one output record per
        input record, in input order.
        Input: if the first non-empty line is a CSV header with a column named
        VIN (any case), the input is CSV (RFC 4180: quoted fields, "" inside
        quotes, commas and line breaks inside quotes, CRLF) and every column
        is passed through; otherwise every non-empty line is one VIN. Blank
        lines are skipped. A UTF-8 byte-order mark is ignored.
        Output (--format=csv, the default for either input): the input's
        columns ("vin" for a plain list), then status (done|failed), source,
        make, model, model_year, trim, series, manufacturer, vehicle_type,
        body_class, drive_type, fuel_type_primary, engine_cylinders,
        displacement_l, plant_country, attempts, notes (note codes joined by
        ';'), failure_reason (INVALID_VIN, UPSTREAM_UNAVAILABLE,
        UPSTREAM_REJECTED, ..., or STREAM_ENDED when the stream ended without
        an answer, BAD_ROW for a row with more fields than the header or a VIN
        that is not UTF-8, which is not sent) and error (the message).
        --format=ndjson: one JSON object per line: {"input": {column: value},
        "request_id": "<0-based index>", "status": "done", "result": {...}} or
        {..., "status": "failed", "failure_reason": "...", "failure": {...}}.
        On a terminal, stderr shows a progress line (done, failed, retrying
        now, rate, ETA when --in is a regular file); a summary line is always
        printed on stderr at the end.

Flags (--name=value or --name value; '-' and '_' are the same in names):
  --server=ADDR         address:port of vin-server (default 127.0.0.1:50051)
  --deadline=DUR        decode: per call (default 30s); batch: the whole
                        stream (default 0 = none). DUR like 500ms, 30s, 2m.
  --model-year=Y        model-year hint sent with every VIN (default 0 = none)
  --warn-check-digit    decode VINs whose check digit is wrong (European
                        VINs), with a check_digit note, instead of rejecting
  --json                decode: print JSON
  --in=FILE|-           batch: input (default -, stdin)
  --out=FILE|-          batch: output (default -, stdout)
  --format=csv|ndjson   batch: output format (default csv)
  --window=N            batch: at most N records between the oldest not yet
                        written and the newest sent (default 512); bounds
                        memory on feeds of any length
  --stagger=DUR         a random delay in [0, DUR) before the first send, to
                        spread fleets of cron jobs (default 0)
  --tls-ca-file=PEM     connect with TLS, trusting the CA bundle PEM
  --tls-cert-file=PEM --tls-key-file=PEM
                        the client certificate and key, for a server that
                        requires one (mTLS)
  --help                this text

Exit status:
  0  decode: the VIN was decoded; batch: every record was decoded
  1  decode: the call failed ("vinctl: CODE: message" on stderr, with
     "retry after" when the server suggests a delay);
     batch: at least one record failed (the output is still complete)
  2  usage error; input that cannot be read or output that cannot be
     written; malformed CSV; or a batch stream that did not end OK
     (server unreachable, connection lost, --deadline passed); records
     read but left without an answer are written as failed, STREAM_ENDED
)";

constexpr char kTryHelp[] = "Try 'vinctl --help'.";

// The flags each command accepts.
const absl::flat_hash_set<std::string>& CommonFlags() {
  static const auto* flags = new absl::flat_hash_set<std::string>{
      "server",      "deadline",      "model_year",  "warn_check_digit",
      "stagger",     "tls_ca_file",   "tls_cert_file", "tls_key_file"};
  return *flags;
}
bool IsDecodeFlag(const std::string& name) {
  return CommonFlags().contains(name) || name == "json";
}
bool IsBatchFlag(const std::string& name) {
  return CommonFlags().contains(name) || name == "in" || name == "out" ||
         name == "format" || name == "window";
}

struct Args {
  std::vector<std::string> positional;
  std::vector<std::string> flags_set;  // normalised names, in order
  bool help = false;
};

// Parses argv into positional arguments and absl flag values.
absl::StatusOr<Args> ParseArgs(int argc, char** argv) {
  Args args;
  bool flags_over = false;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (flags_over || arg == "-" || !absl::StartsWith(arg, "-")) {
      args.positional.emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_over = true;
      continue;
    }
    absl::string_view body = arg;
    body.remove_prefix(absl::StartsWith(body, "--") ? 2 : 1);
    const size_t eq = body.find('=');
    const bool has_value = eq != absl::string_view::npos;
    std::string name = absl::StrReplaceAll(body.substr(0, eq), {{"-", "_"}});
    std::string value = has_value ? std::string(body.substr(eq + 1)) : "";
    if (name == "help" || name == "h" || name == "helpfull") {
      args.help = true;
      continue;
    }
    bool negated = false;
    if (!IsDecodeFlag(name) && !IsBatchFlag(name) &&
        absl::StartsWith(name, "no")) {
      negated = true;
      name.erase(0, absl::StartsWith(name, "no_") ? 3 : 2);
    }
    absl::CommandLineFlag* flag = nullptr;
    if (IsDecodeFlag(name) || IsBatchFlag(name)) {
      flag = absl::FindCommandLineFlag(name);
    }
    if (flag == nullptr || (negated && !flag->IsOfType<bool>())) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag '", arg, "'"));
    }
    if (flag->IsOfType<bool>()) {
      if (negated && has_value) {
        return absl::InvalidArgumentError(
            absl::StrCat("'", arg, "' takes no value"));
      }
      if (!has_value) value = negated ? "false" : "true";
    } else if (!has_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(
            absl::StrCat("flag '", arg, "' needs a value"));
      }
      value = argv[++i];
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad value '", value, "' for --", name, ": ", error));
    }
    args.flags_set.push_back(name);
  }
  return args;
}

bool WasSet(const Args& args, absl::string_view name) {
  for (const auto& f : args.flags_set) {
    if (f == name) return true;
  }
  return false;
}

int UsageError(absl::string_view message) {
  std::cerr << "vinctl: " << message << "\n" << kTryHelp << std::endl;
  return vinctl::kExitError;
}

// Checks the flags common to both commands.
absl::Status CheckCommonFlags() {
  if (absl::Status year =
          domain::CheckModelYear(absl::GetFlag(FLAGS_model_year), "--model-year");
      !year.ok()) {
    return year;
  }
  if (absl::GetFlag(FLAGS_deadline) < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--deadline must not be negative");
  }
  if (absl::GetFlag(FLAGS_stagger) < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--stagger must not be negative");
  }
  if (absl::GetFlag(FLAGS_server).empty()) {
    return absl::InvalidArgumentError("--server must not be empty");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<vin::v1::VinDecoderService::Stub>> NewStub() {
  auto credentials = vinctl::ChannelCredentialsFor(
      {absl::GetFlag(FLAGS_tls_ca_file), absl::GetFlag(FLAGS_tls_cert_file),
       absl::GetFlag(FLAGS_tls_key_file)});
  if (!credentials.ok()) return credentials.status();
  return vin::v1::VinDecoderService::NewStub(
      grpc::CreateChannel(absl::GetFlag(FLAGS_server), *credentials));
}

int Decode(const Args& args) {
  if (args.positional.size() != 2) {
    return UsageError(args.positional.size() < 2
                          ? "decode needs a VIN"
                          : "decode takes one VIN (use batch for more)");
  }
  vinctl::DecodeOptions options;
  options.vin = args.positional[1];
  options.model_year = absl::GetFlag(FLAGS_model_year);
  options.warn_check_digit = absl::GetFlag(FLAGS_warn_check_digit);
  options.json = absl::GetFlag(FLAGS_json);
  options.stagger = absl::GetFlag(FLAGS_stagger);
  if (WasSet(args, "deadline")) {
    options.deadline = absl::GetFlag(FLAGS_deadline);
  }
  auto stub = NewStub();
  if (!stub.ok()) return UsageError(stub.status().message());
  return vinctl::RunDecode(options, stub->get(), std::cout, std::cerr);
}

int Batch(const Args& args) {
  if (args.positional.size() != 1) {
    return UsageError(absl::StrCat("batch takes no arguments (got '",
                                   args.positional[1],
                                   "'); use --in=FILE for the input"));
  }
  vinctl::BatchOptions options;
  const std::string format = absl::AsciiStrToLower(absl::GetFlag(FLAGS_format));
  if (format == "csv") {
    options.format = vinctl::OutputFormat::kCsv;
  } else if (format == "ndjson") {
    options.format = vinctl::OutputFormat::kNdjson;
  } else {
    return UsageError("--format must be csv or ndjson");
  }
  options.window = absl::GetFlag(FLAGS_window);
  if (options.window < 1) return UsageError("--window must be at least 1");
  options.model_year = absl::GetFlag(FLAGS_model_year);
  options.warn_check_digit = absl::GetFlag(FLAGS_warn_check_digit);
  options.deadline = absl::GetFlag(FLAGS_deadline);
  options.stagger = absl::GetFlag(FLAGS_stagger);
  options.show_progress = isatty(STDERR_FILENO) == 1;

  const std::string in_path = absl::GetFlag(FLAGS_in);
  const std::string out_path = absl::GetFlag(FLAGS_out);
  std::ifstream in_file;
  std::istream* in = &std::cin;
  if (in_path != "-") {
    in_file.open(in_path, std::ios::binary);
    if (!in_file) {
      std::cerr << "vinctl: cannot read " << in_path << ": "
                << std::strerror(errno) << std::endl;
      return vinctl::kExitError;
    }
    in = &in_file;
    struct stat st;
    if (stat(in_path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      options.input_size = st.st_size;
    }
  }
  std::ofstream out_file;
  std::ostream* out = &std::cout;
  if (out_path != "-") {
    out_file.open(out_path, std::ios::binary | std::ios::trunc);
    if (!out_file) {
      std::cerr << "vinctl: cannot write " << out_path << ": "
                << std::strerror(errno) << std::endl;
      return vinctl::kExitError;
    }
    out = &out_file;
  }

  auto stub = NewStub();
  if (!stub.ok()) return UsageError(stub.status().message());
  auto result = vinctl::RunBatch(options, stub->get(), *in, *out, std::cerr);
  if (!result.ok()) std::cerr << "vinctl: " << result.status() << std::endl;
  if (out_file.is_open()) {
    out_file.close();
    if (!out_file) {
      std::cerr << "vinctl: cannot write " << out_path << std::endl;
      return vinctl::kExitError;
    }
  }
  return vinctl::BatchExitCode(result);
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  auto args = ParseArgs(argc, argv);
  if (!args.ok()) return UsageError(args.status().message());
  if (args->help) {
    std::cout << kUsage;
    return vinctl::kExitOk;
  }
  if (args->positional.empty()) {
    return UsageError("a command is needed: decode or batch");
  }
  if (auto s = CheckCommonFlags(); !s.ok()) return UsageError(s.message());
  const std::string& command = args->positional[0];
  if (command != "decode" && command != "batch") {
    return UsageError(absl::StrCat("unknown command '", command,
                                   "' (commands: decode, batch)"));
  }
  for (const std::string& name : args->flags_set) {
    const bool ok =
        command == "decode" ? IsDecodeFlag(name) : IsBatchFlag(name);
    if (!ok) {
      return UsageError(absl::StrCat("--",
                                     absl::StrReplaceAll(name, {{"_", "-"}}),
                                     " does not apply to ", command));
    }
  }
  return command == "decode" ? Decode(*args) : Batch(*args);
}
