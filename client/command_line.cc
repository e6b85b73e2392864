#include "client/command_line.h"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/cli_flags.h"
#include "client/job_command_line.h"
#include "domain/limits.h"

namespace vinctl {
namespace {

constexpr char kDescription[] =
    "vinctl: command-line client of the VIN decode service "
    "(vin.v1.VinDecoderService)";

constexpr char kCommandsHelp[] =
    "Run 'vinctl decode --help', 'vinctl batch --help' or 'vinctl job "
    "--help' for a command's flags.\n";

constexpr char kFlagSyntax[] =
    R"(Flags go after the command, as --name=value or --name value; '-' and '_' are
the same in names (--model-year, --model_year); a switch is turned off with
--no-NAME or --NAME=false. DUR is a duration such as 500ms, 30s, 2m or 1h30m.

)";

constexpr char kExitStatus[] =
    R"(Exit status:
  0  decode: the VIN was decoded; batch: every record was decoded
  1  decode: the call failed ("vinctl: CODE: message" on stderr, with
     "retry after" when the server suggests a delay);
     batch: at least one record failed (the output is still complete)
  2  usage error; input that cannot be read or output that cannot be
     written; malformed CSV; or a batch stream that did not end OK
     (server unreachable, connection lost, --deadline passed); records
     read but left without an answer are written as failed, STREAM_ENDED)";

// A command's description: its first line is its entry in vinctl's list of
// commands; all of it heads the command's own help.
constexpr char kDecodeDescription[] =
    R"(Decode one VIN and print the vehicle.
With --json, print the vin.v1.DecodeResult in protobuf's JSON mapping (proto
field names) instead.)";

constexpr char kBatchDescription[] =
    R"(Decode a feed (a CSV or a list of VINs).
Streams it through DecodeBatch and writes one output record per input
record, in input order.)";

constexpr char kBatchDetails[] =
    R"(Input: if the first non-empty line is a CSV header with a column named VIN
(any case), the input is CSV (RFC 4180: quoted fields, "" inside quotes,
commas and line breaks inside quotes, CRLF) and every column is passed
through; otherwise every non-empty line is one VIN. Blank lines are skipped.
A UTF-8 byte-order mark is ignored.

Output (--format=csv, the default for either input): the input's columns
("vin" for a plain list), then status (done|failed), source, make, model,
model_year, trim, series, manufacturer, vehicle_type, body_class, drive_type,
fuel_type_primary, engine_cylinders, displacement_l, plant_country, attempts,
notes (note codes joined by ';'), failure_reason (INVALID_VIN,
UPSTREAM_UNAVAILABLE, UPSTREAM_REJECTED, ..., or STREAM_ENDED when the stream
ended without an answer, BAD_ROW for a row with more fields than the header
or a VIN that is not UTF-8, which is not sent) and error (the message).
--format=ndjson: one JSON object per line: {"input": {column: value},
"request_id": "<0-based index>", "status": "done", "result": {...}} or
{..., "status": "failed", "failure_reason": "...", "failure": {...}}.

On a terminal, stderr shows a progress line (done, failed, retrying now,
rate, ETA when --in is a regular file); a summary line is always printed on
stderr at the end.

)";

class Formatter : public CLI::Formatter {
 public:
  // Lists each flag under its first name only: the other spellings it
  // accepts (with '_', --no-NAME) are told once in the footer.
  std::string make_option_name(const CLI::Option* option,
                               bool is_positional) const override {
    if (is_positional || option->get_lnames().empty()) {
      return CLI::Formatter::make_option_name(option, is_positional);
    }
    std::string name;
    for (const std::string& s : option->get_snames()) {
      absl::StrAppend(&name, "-", s, ",");
    }
    return absl::StrCat(name, "--", option->get_lnames().front());
  }

  // A command in the list of commands: the first line of its description.
  std::string make_subcommand(const CLI::App* command) const override {
    const std::string description = command->get_description();
    std::stringstream out;
    CLI::detail::format_help(out, command->get_display_name(true),
                             description.substr(0, description.find('\n')),
                             get_column_width());
    return out.str();
  }
};

// The flags of both commands; `Options` is DecodeOptions or BatchOptions.
template <typename Options>
void AddCommonFlags(CLI::App* app, CommandLine* command_line, Options* options,
                    const std::string& deadline_default,
                    const std::string& deadline_help) {
  AddServerFlag(app, &command_line->server);
  AddDuration(app, "deadline", &options->deadline, deadline_default,
              deadline_help);
  app->add_option_function<int32_t>(
         OptionNames("model-year"),
         [options](const int32_t& year) {
           if (absl::Status status =
                   domain::CheckModelYear(year, "--model-year");
               !status.ok()) {
             Invalid(std::string(status.message()));
           }
           options->model_year = year;
         },
         "model-year hint sent with every VIN; 0 = none")
      ->type_name("YEAR")
      ->default_str("0");
  app->add_option_function<std::string>(
         OptionNames("priority"),
         [options](const std::string& text) {
           const std::string p = absl::AsciiStrToLower(text);
           if (p == "interactive") {
             options->priority = vin::v1::PRIORITY_INTERACTIVE;
           } else if (p == "bulk") {
             options->priority = vin::v1::PRIORITY_BULK;
           } else {
             Invalid(absl::StrCat("--priority must be interactive or bulk, got '",
                                  text, "'"));
           }
         },
         "how urgent: interactive goes first toward NHTSA,\n"
         "bulk keeps a share (default: interactive for\n"
         "decode, bulk for batch)")
      ->type_name("interactive|bulk");
  app->add_option_function<std::string>(
         OptionNames("tenant"),
         [options](const std::string& text) {
           if (text.empty()) Invalid("--tenant must not be empty");
           options->tenant = text;
         },
         "the tenant to be counted as (the x-vin-tenant\n"
         "header; a client certificate's subject wins)")
      ->type_name("NAME");
  app->add_flag(SwitchNames("warn-check-digit"), options->warn_check_digit,
                "decode VINs whose check digit is wrong (European\n"
                "VINs), with a check_digit note, instead of\n"
                "rejecting them");
  AddDuration(app, "stagger", &options->stagger, "0",
              "a random delay in [0, DUR) before the first send,\n"
              "to spread fleets of cron jobs");
  AddTlsFlags(app, &command_line->tls);
}

CLI::App* AddDecode(CLI::App* app, CommandLine* command_line) {
  CLI::App* decode = app->add_subcommand("decode", kDecodeDescription);
  decode->group("Commands");
  decode->footer(absl::StrCat(kFlagSyntax, kExitStatus));
  decode->add_option("VIN", command_line->decode.vin, "the VIN to decode")
      ->required();
  decode->add_flag(SwitchNames("json"), command_line->decode.json,
                   "print the result as JSON");
  AddCommonFlags(decode, command_line, &command_line->decode,
                 absl::FormatDuration(command_line->decode.deadline),
                 "deadline of the call; 0 = none");
  return decode;
}

CLI::App* AddBatch(CLI::App* app, CommandLine* command_line) {
  CLI::App* batch = app->add_subcommand("batch", kBatchDescription);
  batch->group("Commands");
  batch->footer(absl::StrCat(kBatchDetails, kFlagSyntax, kExitStatus));
  BatchOptions* options = &command_line->batch;
  batch->add_option(OptionNames("in"), command_line->in, "input, - for stdin")
      ->type_name("FILE")
      ->capture_default_str();
  batch
      ->add_option(OptionNames("out"), command_line->out,
                   "output, - for stdout")
      ->type_name("FILE")
      ->capture_default_str();
  batch
      ->add_option_function<std::string>(
          OptionNames("format"),
          [options](const std::string& text) {
            const std::string format = absl::AsciiStrToLower(text);
            if (format == "csv") {
              options->format = feed::OutputFormat::kCsv;
            } else if (format == "ndjson") {
              options->format = feed::OutputFormat::kNdjson;
            } else {
              Invalid(absl::StrCat("--format must be csv or ndjson, got '",
                                   text, "'"));
            }
          },
          "output format")
      ->type_name("csv|ndjson")
      ->default_str("csv");
  batch
      ->add_option_function<int32_t>(
          OptionNames("window"),
          [options](const int32_t& window) {
            if (window < 1) {
              Invalid(
                  absl::StrCat("--window must be at least 1, got ", window));
            }
            options->window = window;
          },
          "at most N records between the oldest not yet\n"
          "written and the newest sent; bounds memory on\n"
          "feeds of any length")
      ->type_name("N")
      ->default_str(absl::StrCat(options->window));
  AddCommonFlags(batch, command_line, options,
                 absl::FormatDuration(options->deadline),
                 "deadline of the whole stream; 0 = none");
  return batch;
}

bool BeforeCommand(const CLI::App& app, const CLI::ParseError& e) {
  return app.get_subcommands().empty() ||
         (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr &&
          e.get_name() == app.get_name());
}

// Writes the usage error of `e`, naming what is wrong, and where the help
// is. Before a command, CLI11 only knows that one is missing; say what was
// there instead.
void WriteUsageError(const CLI::App& app, const CLI::ParseError& e,
                     std::ostream& err) {
  std::string problem = e.what();
  std::string help = "vinctl --help";
  if (BeforeCommand(app, e)) {
    const std::vector<std::string> rest = app.remaining();
    if (rest.empty()) {
      problem = "a command is needed: decode, batch or job";
    } else if (!absl::StartsWith(rest.front(), "-")) {
      problem = absl::StrCat("unknown command '", rest.front(),
                             "' (commands: decode, batch, job)");
    } else {
      problem =
          absl::StrCat("'", rest.front(),
                       "' before the command: flags go after decode, batch or "
                       "job");
    }
  } else {
    help = absl::StrCat("vinctl ", app.get_subcommands().front()->get_name(),
                        " --help");
  }
  err << "vinctl: " << problem << "\nTry '" << help << "'." << std::endl;
}

}  // namespace

absl::optional<int> ParseCommandLine(const std::vector<std::string>& args,
                                     CommandLine* command_line,
                                     std::ostream& out, std::ostream& err) {
  CLI::App app(kDescription, "vinctl");
  auto formatter = std::make_shared<Formatter>();
  formatter->label("SUBCOMMAND", "COMMAND");
  app.formatter(formatter);
  app.footer(absl::StrCat(kCommandsHelp, kFlagSyntax, kExitStatus));
  app.require_subcommand(1);
  // absl's flags kept the last of repeated values; so does vinctl.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  AddDecode(&app, command_line);
  const CLI::App* batch = AddBatch(&app, command_line);
  const CLI::App* job = AddJob(&app, command_line);

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << app.help();  // the selected command's, if there is one
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    WriteUsageError(app, e, err);
    return kExitError;
  }
  command_line->command = batch->parsed() ? Command::kBatch
                          : job->parsed() ? Command::kJob
                                          : Command::kDecode;
  return absl::nullopt;
}

}  // namespace vinctl
