// vinctl's command line: the commands `decode`, `batch` and `job`, their flags
// and their help, parsed by CLI11 (client/command_line.cc).
#ifndef VIN_CLIENT_COMMAND_LINE_H_
#define VIN_CLIENT_COMMAND_LINE_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/types/optional.h"
#include "client/batch.h"
#include "client/credentials.h"
#include "client/decode_command.h"
#include "client/job_command.h"

namespace vinctl {

enum class Command { kDecode, kBatch, kJob };

// What to run. Only the options of `command` are filled from the flags; the
// others keep their defaults.
struct CommandLine {
  Command command = Command::kDecode;
  std::string server = "127.0.0.1:50051";  // address:port of vin-server
  TlsOptions tls;
  DecodeOptions decode;   // decode: the VIN and its flags
  BatchOptions batch;     // batch: every flag but --in and --out
  std::string in = "-";   // batch: input file, "-" for stdin
  std::string out = "-";  // batch: output file, "-" for stdout
  JobOptions job;         // job: the command and its flags
};

// Parses vinctl's arguments (`args` without the program name) into
// `*command_line`. Returns nullopt when the command is to be run, or the exit
// status when vinctl is to exit at once: kExitOk after writing the help asked
// for (--help, -h, --help-all) to `out`, kExitError after writing a usage
// error to `err`: "vinctl: <what is wrong, naming the flag>" and a line
// pointing at the help.
absl::optional<int> ParseCommandLine(const std::vector<std::string>& args,
                                     CommandLine* command_line,
                                     std::ostream& out, std::ostream& err);

}  // namespace vinctl

#endif  // VIN_CLIENT_COMMAND_LINE_H_
