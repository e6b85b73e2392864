// The flag spellings vinctl's commands share (client/command_line.cc,
// client/job_command_line.cc): '-' and '_' alike in names, --no-NAME for a
// switch, durations in absl's syntax, and the usage error of a value.
#ifndef VIN_CLIENT_CLI_FLAGS_H_
#define VIN_CLIENT_CLI_FLAGS_H_

#include <CLI/CLI.hpp>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/credentials.h"

namespace vinctl {

// A value that CLI11 converted but vinctl does not accept; `message` names
// the flag.
[[noreturn]] void Invalid(std::string message);

std::string Underscored(absl::string_view name);

// "--model-year,--model_year": '-' and '_' are the same in names.
std::string OptionNames(absl::string_view name);

// A switch: on with --NAME (or --NAME=true), off with --no-NAME, --noNAME,
// --no_NAME (in either spelling of NAME) or --NAME=false.
std::string SwitchNames(absl::string_view name);

// --NAME=DUR in absl::ParseDuration's syntax, not negative, into `*value`.
void AddDuration(CLI::App* app, absl::string_view name, absl::Duration* value,
                 const std::string& default_text, const std::string& help);

// --server=ADDR into `*server` (not empty; its value is the default).
void AddServerFlag(CLI::App* app, std::string* server);

// --tls-ca-file, --tls-cert-file, --tls-key-file into `*tls`.
void AddTlsFlags(CLI::App* app, TlsOptions* tls);

}  // namespace vinctl

#endif  // VIN_CLIENT_CLI_FLAGS_H_
