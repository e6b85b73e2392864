#include "client/job_command_line.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "client/cli_flags.h"

namespace vinctl {
namespace {

constexpr char kJobDescription[] =
    R"(Bulk jobs: a feed the server keeps and runs (DESIGN rule 20).
A job outlives its connection: submit it, let it run (off-peak if asked),
fetch its results whenever, across restarts of either side.)";

constexpr char kJobDetails[] =
    R"(Commands:
  submit --in=FEED [--off-peak] [--not-before=T]   prints the job's id
  status ID | watch ID | cancel ID | delete ID | list
  fetch ID --in=FEED --out=FILE   the file vinctl batch writes for FEED,
      waiting while the job runs; interrupted, the same command resumes
      (its progress is kept in FILE.fetch)

Exit status: 0 ok; 1 fetch: a record failed, watch: the job did not
succeed; 2 usage, I/O or a failed call ("vinctl: CODE: message").
)";

// The flags every job command takes: the server, TLS, the tenant.
void AddConnectionFlags(CLI::App* app, CommandLine* command_line) {
  AddServerFlag(app, &command_line->server);
  app->add_option(OptionNames("tenant"), command_line->job.tenant,
                  "the tenant to be counted as (x-vin-tenant)")
      ->type_name("NAME");
  AddTlsFlags(app, &command_line->tls);
}

CLI::App* AddOp(CLI::App* job, CommandLine* command_line, const char* name,
                const char* description, JobOp op, bool takes_id) {
  CLI::App* sub = job->add_subcommand(name, description);
  sub->callback([command_line, op] { command_line->job.op = op; });
  if (takes_id) {
    sub->add_option("ID", command_line->job.id, "the job's id")->required();
  }
  AddConnectionFlags(sub, command_line);
  return sub;
}

}  // namespace

CLI::App* AddJob(CLI::App* app, CommandLine* command_line) {
  JobOptions& o = command_line->job;
  CLI::App* job = app->add_subcommand("job", kJobDescription);
  job->group("Commands");
  job->footer(kJobDetails);
  job->require_subcommand(1);

  CLI::App* submit =
      AddOp(job, command_line, "submit",
            "submit a feed as a job; prints its id", JobOp::kSubmit, false);
  submit->add_option(OptionNames("in"), o.in, "the feed, - for stdin")
      ->type_name("FILE");
  submit->add_flag(SwitchNames("off-peak"), o.off_peak,
                   "hold the job while NHTSA is in its business day");
  submit
      ->add_option(OptionNames("not-before"), o.not_before,
                   "hold the job until this RFC 3339 time")
      ->type_name("TIME");
  submit->add_option(OptionNames("name"), o.name,
                     "the job's display name (default: --in)");
  submit->add_option(OptionNames("idempotency-key"), o.idempotency_key,
                     "sent again with the same key, the same job answers");
  submit->add_option(OptionNames("notify-url"), o.notify_url,
                     "POSTed the final job when it ends");
  submit->add_option(OptionNames("model-year"), o.model_year,
                     "model-year hint sent with every VIN; 0 = none");
  submit->add_flag(SwitchNames("warn-check-digit"), o.warn_check_digit,
                   "decode VINs whose check digit is wrong, with a note");

  AddOp(job, command_line, "status", "the job now", JobOp::kStatus, true);
  AddOp(job, command_line, "watch", "a line whenever the job moves, to its end",
        JobOp::kWatch, true);
  AddOp(job, command_line, "cancel", "fail the items left (CANCELLED)",
        JobOp::kCancel, true);
  AddOp(job, command_line, "delete", "remove an ended job and its results",
        JobOp::kDelete, true);
  AddOp(job, command_line, "list", "the tenant's jobs, newest first",
        JobOp::kList, false);
  CLI::App* fetch = AddOp(job, command_line, "fetch",
                          "write the job's results as vinctl batch writes them",
                          JobOp::kFetch, true);
  fetch
      ->add_option(OptionNames("in"), o.in,
                   "the feed the job was submitted from, - for stdin")
      ->type_name("FILE");
  fetch->add_option(OptionNames("out"), o.out, "the output, - for stdout")
      ->type_name("FILE");
  fetch
      ->add_option_function<std::string>(
          OptionNames("format"),
          [&o](const std::string& text) {
            const std::string f = absl::AsciiStrToLower(text);
            if (f == "csv") {
              o.format = feed::OutputFormat::kCsv;
            } else if (f == "ndjson") {
              o.format = feed::OutputFormat::kNdjson;
            } else {
              Invalid(absl::StrCat("--format must be csv or ndjson, got '",
                                   text, "'"));
            }
          },
          "csv (default) or ndjson, as vinctl batch")
      ->type_name("csv|ndjson");
  return job;
}

}  // namespace vinctl
