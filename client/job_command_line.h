// `vinctl job`'s command line (client/job_command_line.cc): its commands
// and their flags, added to vinctl's by ParseCommandLine.
#ifndef VIN_CLIENT_JOB_COMMAND_LINE_H_
#define VIN_CLIENT_JOB_COMMAND_LINE_H_

#include <CLI/CLI.hpp>

#include "client/command_line.h"

namespace vinctl {

// Adds `job` and its commands to `app`; the one parsed sets
// command_line->job.op.
CLI::App* AddJob(CLI::App* app, CommandLine* command_line);

}  // namespace vinctl

#endif  // VIN_CLIENT_JOB_COMMAND_LINE_H_
