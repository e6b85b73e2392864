#include "client/cli_flags.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace vinctl {

[[noreturn]] void Invalid(std::string message) {
  throw CLI::ValidationError(std::move(message));
}

std::string Underscored(absl::string_view name) {
  return absl::StrReplaceAll(name, {{"-", "_"}});
}

std::string OptionNames(absl::string_view name) {
  std::string names = absl::StrCat("--", name);
  if (Underscored(name) != name) {
    absl::StrAppend(&names, ",--", Underscored(name));
  }
  return names;
}

std::string SwitchNames(absl::string_view name) {
  std::string names = OptionNames(name);
  std::vector<std::string> spellings = {std::string(name)};
  if (Underscored(name) != name) spellings.push_back(Underscored(name));
  for (const std::string& spelling : spellings) {
    for (absl::string_view prefix : {"no-", "no_", "no"}) {
      absl::StrAppend(&names, ",!--", prefix, spelling);
    }
  }
  return names;
}

void AddDuration(CLI::App* app, absl::string_view name, absl::Duration* value,
                 const std::string& default_text, const std::string& help) {
  const std::string flag = absl::StrCat("--", name);
  app->add_option_function<std::string>(
         OptionNames(name),
         [flag, value](const std::string& text) {
           absl::Duration duration;
           if (!absl::ParseDuration(text, &duration)) {
             Invalid(absl::StrCat(flag, ": '", text,
                                  "' is not a duration (such as 500ms, 30s, "
                                  "2m or 1h30m)"));
           }
           if (duration < absl::ZeroDuration()) {
             Invalid(absl::StrCat(flag, " must not be negative, got ", text));
           }
           *value = duration;
         },
         help)
      ->type_name("DUR")
      ->default_str(default_text);
}

void AddServerFlag(CLI::App* app, std::string* server) {
  app->add_option_function<std::string>(
         OptionNames("server"),
         [server](const std::string& address) {
           if (address.empty()) Invalid("--server must not be empty");
           *server = address;
         },
         "address:port of vin-server")
      ->type_name("ADDR")
      ->default_str(*server);
}

void AddTlsFlags(CLI::App* app, TlsOptions* tls) {
  app->add_option(OptionNames("tls-ca-file"), tls->ca_file,
                  "connect with TLS, trusting the CA bundle PEM")
      ->type_name("PEM");
  app->add_option(OptionNames("tls-cert-file"), tls->cert_file,
                  "the client certificate, for a server that\n"
                  "requires one (mTLS); with --tls-key-file")
      ->type_name("PEM");
  app->add_option(OptionNames("tls-key-file"), tls->key_file,
                  "the private key of --tls-cert-file")
      ->type_name("PEM");
}

}  // namespace vinctl
