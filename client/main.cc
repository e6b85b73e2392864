// vinctl: the command-line client of vin.v1.VinDecoderService. The command
// line (commands, flags, help) is client/command_line.cc's, parsed by CLI11;
// this file opens the files, connects and runs the command.
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

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "client/batch.h"
#include "client/command_line.h"
#include "client/credentials.h"
#include "client/decode_command.h"
#include "client/job_command.h"

namespace {

// A flag value that passed the parser but cannot be used (a TLS file that
// cannot be read): a usage error.
int UsageError(absl::string_view message) {
  std::cerr << "vinctl: " << message << "\nTry 'vinctl --help'." << std::endl;
  return vinctl::kExitError;
}

absl::StatusOr<std::unique_ptr<vin::v1::VinDecoderService::Stub>> NewStub(
    const vinctl::CommandLine& command_line) {
  auto credentials = vinctl::ChannelCredentialsFor(command_line.tls);
  if (!credentials.ok()) return credentials.status();
  return vin::v1::VinDecoderService::NewStub(
      grpc::CreateChannel(command_line.server, *credentials));
}

int Decode(const vinctl::CommandLine& command_line) {
  auto stub = NewStub(command_line);
  if (!stub.ok()) return UsageError(stub.status().message());
  return vinctl::RunDecode(command_line.decode, stub->get(), std::cout,
                           std::cerr);
}

int Batch(const vinctl::CommandLine& command_line) {
  vinctl::BatchOptions options = command_line.batch;
  options.show_progress = isatty(STDERR_FILENO) == 1;

  const std::string& in_path = command_line.in;
  const std::string& out_path = command_line.out;
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

  auto stub = NewStub(command_line);
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

int Job(const vinctl::CommandLine& command_line) {
  auto credentials = vinctl::ChannelCredentialsFor(command_line.tls);
  if (!credentials.ok()) return UsageError(credentials.status().message());
  auto stub = vin::v1::VinJobService::NewStub(
      grpc::CreateChannel(command_line.server, *credentials));
  return vinctl::RunJob(command_line.job, stub.get(), std::cout, std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  vinctl::CommandLine command_line;
  if (auto exit_status = vinctl::ParseCommandLine(
          std::vector<std::string>(argv + 1, argv + argc), &command_line,
          std::cout, std::cerr)) {
    return *exit_status;
  }
  switch (command_line.command) {
    case vinctl::Command::kBatch:
      return Batch(command_line);
    case vinctl::Command::kJob:
      return Job(command_line);
    case vinctl::Command::kDecode:
      break;
  }
  return Decode(command_line);
}
