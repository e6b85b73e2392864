// The page at / (server/http/page/index.html) in a real browser: headless
// Chromium (Debian's chromium) drives it against the real server in this
// process and the fake vPIC, and reads what a person would see. Each test
// keeps screenshots in the build's test-artifacts/ directory.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "testing/chromium.h"
#include "testing/server_fixture.h"
#include "testing/temp_dir.h"
#include "testing/vin_gen.h"

namespace server {
namespace {

using Json = nlohmann::json;
using testing_util::Chromium;
using testing_util::ValidVin;

constexpr char kFord[] = "1FTMW1T88MFA00001";  // a fixture: 2021 FORD F-150

// One CSV line's fields (quoted ones unquoted).
std::vector<std::string> CsvFields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back().push_back('"');
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back().push_back(c);
    }
  }
  return out;
}

class HttpPageTest : public testing_util::ServerFixture {
 protected:
  void Open(ServerOptions o) {
    o.http.listen = "127.0.0.1:0";
    StartServer(std::move(o));
    ASSERT_GT(server_->http_port(), 0);
    std::string error;
    browser_ = Chromium::Launch(VIN_CHROMIUM, Artifact("chromium.log"), &error);
    ASSERT_NE(browser_, nullptr) << error;
    ASSERT_TRUE(browser_->Open(
        absl::StrCat("http://127.0.0.1:", server_->http_port(), "/"), &error))
        << error;
    Json ready;
    ASSERT_TRUE(browser_->WaitFor(
        "document.readyState === 'complete' && !!document.getElementById('go')",
        absl::Seconds(30), &ready, &error))
        << error;
    ASSERT_FALSE(ready.is_null()) << "the page did not load";
  }

  // The value of `expr` in the page; a test failure when it throws.
  Json Eval(const std::string& expr) {
    Json v;
    std::string error;
    EXPECT_TRUE(browser_->Eval(expr, &v, &error)) << expr << ": " << error;
    return v;
  }
  // Waits until `expr` is truthy in the page; its value (null: timed out).
  Json WaitFor(const std::string& expr, absl::Duration timeout = absl::Seconds(30)) {
    Json v;
    std::string error;
    EXPECT_TRUE(browser_->WaitFor(expr, timeout, &v, &error)) << error;
    return v;
  }
  void Screenshot(const std::string& name) {
    std::string error;
    EXPECT_TRUE(browser_->Screenshot(Artifact(name), &error)) << error;
  }
  static std::string Artifact(const std::string& name) {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    return absl::StrCat(VIN_ARTIFACT_DIR, "/", info->name(), "-", name);
  }
  // A row's state and details as shown: "state|details".
  static std::string RowText(const std::string& vin) {
    return absl::StrCat(
        "(() => { const tr = document.querySelector('tr[data-vin=\"", vin,
        "\"]'); return tr ? tr.cells[1].textContent + '|' + tr.cells[2].textContent"
        " : null; })()");
  }

  std::unique_ptr<Chromium> browser_;
};

// A VIN whose first attempt vPIC answers 503: the page shows it retrying
// with a countdown that goes down and the reason, and no vehicle, then its
// vehicle once the decode arrives. A VIN that fails validation says why and
// that trying again will not help.
TEST_F(HttpPageTest, ARetryingVinShowsItsCountdownThenItsVehicle) {
  ServerOptions o = Defaults();
  o.engine.retry_base = absl::Seconds(2);  // a countdown a person can read
  o.engine.retry_cap = absl::Seconds(3);
  ASSERT_NO_FATAL_FAILURE(Open(o));
  Script(kFord, "503");
  const std::string other = ValidVin(7);
  const std::string bad = "1FTMW1T88MFA0000I";  // I is not a VIN letter
  Eval(absl::StrCat("document.getElementById('vins').value = '", kFord, "\\n",
                    other, "\\n", bad, "';"
                    "document.getElementById('go').click(); true"));

  const Json first = WaitFor(absl::StrCat(
      "(() => { const t = ", RowText(kFord),
      "; return t && t.startsWith('retrying in') ? t : null; })()"));
  ASSERT_TRUE(first.is_string()) << "never showed the retry: " << Eval(RowText(kFord));
  const std::string shown = first.get<std::string>();
  EXPECT_TRUE(absl::StrContains(shown, "attempt 1 failed: HTTP 503")) << shown;
  EXPECT_FALSE(absl::StrContains(shown, "FORD") || absl::StrContains(shown, "F-150"))
      << "a vehicle before its decode: " << shown;
  // "retrying in 2.4 s": it counts down while the page waits.
  const double from = std::stod(shown.substr(std::string("retrying in ").size()));
  EXPECT_GT(from, 0.5);
  EXPECT_LE(from, 3.0);
  const Json later = WaitFor(absl::StrCat(
      "(() => { const t = ", RowText(kFord),
      "; const m = t && /^retrying in ([0-9.]+) s/.exec(t);"
      " return m && parseFloat(m[1]) <= ", from - 0.5, " ? t : null; })()"));
  ASSERT_TRUE(later.is_string()) << "the countdown did not go down from " << from;
  Screenshot("retrying.png");

  const Json done = WaitFor(absl::StrCat(
      "(() => { const t = ", RowText(kFord),
      "; return t && t.startsWith('done') ? t : null; })()"));
  ASSERT_TRUE(done.is_string()) << Eval(RowText(kFord));
  EXPECT_EQ(done.get<std::string>(),
            "done|2021 FORD F-150 SuperCrew-SSV \u2014 from vPIC");
  const Json bad_row = WaitFor(absl::StrCat(
      "(() => { const t = ", RowText(bad),
      "; return t && t.startsWith('failed') ? t : null; })()"));
  ASSERT_TRUE(bad_row.is_string());
  EXPECT_TRUE(absl::StartsWith(bad_row.get<std::string>(), "failed|not a valid VIN: "))
      << bad_row;
  EXPECT_TRUE(absl::EndsWith(bad_row.get<std::string>(), "trying again will not help"))
      << bad_row;
  const Json other_row = WaitFor(absl::StrCat(
      "(() => { const t = ", RowText(other),
      "; return t && t.startsWith('done') ? t : null; })()"));
  EXPECT_TRUE(other_row.is_string()) << Eval(RowText(other));
  Screenshot("done.png");
  EXPECT_EQ(fake_->RequestCount(kFord), 2) << "the 503, then the decode";
  EXPECT_EQ(fake_->RequestCount(bad), 0) << "an invalid VIN never reaches vPIC";
}

// A CSV file dropped on the page runs as one batch: the progress bar fills,
// and the decoded CSV (the input's columns, then the decode's) downloads.
TEST_F(HttpPageTest, ADroppedCsvRunsAsABatchAndItsDecodedCsvDownloads) {
  ASSERT_NO_FATAL_FAILURE(Open(Defaults()));
  constexpr int kRows = 40;
  std::string csv = "stock,VIN,model year\r\n";
  for (int i = 0; i < kRows; ++i) {
    absl::StrAppend(&csv, "S", i, ",", i == 5 ? "NOTAVIN" : ValidVin(100 + i),
                    ",\r\n");
  }
  Eval(absl::StrCat(
      "(() => { const dt = new DataTransfer();"
      " dt.items.add(new File([", Json(csv).dump(), "], 'feed.csv', {type: 'text/csv'}));"
      " document.getElementById('drop').dispatchEvent("
      "   new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));"
      " return true; })()"));
  const Json finished = WaitFor(
      "(() => { const a = document.getElementById('download');"
      " return !a.hidden && a.href ? document.getElementById('summary').textContent"
      " : null; })()");
  ASSERT_TRUE(finished.is_string()) << Eval("document.getElementById('summary').textContent");
  EXPECT_EQ(finished.get<std::string>(),
            absl::StrCat(kRows, " of ", kRows, " finished: ", kRows - 1,
                         " decoded, 1 failed"));
  EXPECT_EQ(Eval("document.getElementById('progress').value"), kRows);
  EXPECT_EQ(Eval("document.getElementById('progress').max"), kRows);
  Screenshot("batch.png");

  const Json text = Eval(
      "fetch(document.getElementById('download').href).then((r) => r.text())");
  ASSERT_TRUE(text.is_string());
  std::vector<std::string> lines =
      absl::StrSplit(text.get<std::string>(), "\r\n", absl::SkipEmpty());
  ASSERT_EQ(lines.size(), static_cast<size_t>(kRows + 1));
  EXPECT_EQ(lines[0],
            "stock,VIN,model year,status,make,model,model_year,trim,"
            "vehicle_type,body_class,source,failure,retryable");
  // Each row as the gRPC API decodes it (now from the cache).
  for (int i = 0; i < kRows; ++i) {
    const std::vector<std::string> cols = CsvFields(lines[i + 1]);
    ASSERT_EQ(cols.size(), 13u) << lines[i + 1];
    EXPECT_EQ(cols[0], absl::StrCat("S", i));
    if (i == 5) {
      EXPECT_EQ(cols[3], "failed");
      EXPECT_TRUE(absl::StartsWith(cols[11], "not a valid VIN")) << lines[i + 1];
      EXPECT_EQ(cols.back(), "false");
      continue;
    }
    vin::v1::DecodeResponse r;
    ASSERT_TRUE(Decode(ValidVin(100 + i), &r).ok());
    EXPECT_EQ(cols[3], "done") << lines[i + 1];
    EXPECT_EQ(cols[4], r.result().vehicle().make()) << lines[i + 1];
    EXPECT_EQ(cols[5], r.result().vehicle().model()) << lines[i + 1];
    EXPECT_EQ(cols[10], "vPIC") << lines[i + 1];
  }
  EXPECT_EQ(fake_->TotalVinsRequested(), kRows - 1);
}

// Jobs (rule 20): a CSV submitted as a job from the page is listed with
// its state and progress, and once it has ended its decoded CSV downloads:
// the posted file's columns, then vinctl batch's.
TEST_F(HttpPageTest, ACsvSubmittedAsAJobIsListedAndItsCsvDownloads) {
  testing_util::TempDir dir("vin-page-jobs");
  ServerOptions o = Defaults();
  o.jobs.path = dir.File("jobs.db");
  ASSERT_NO_FATAL_FAILURE(Open(std::move(o)));
  constexpr int kRows = 30;
  std::string csv = "stock,VIN\r\n";
  for (int i = 0; i < kRows; ++i) {
    absl::StrAppend(&csv, "S", i, ",", i == 7 ? "NOTAVIN" : ValidVin(300 + i),
                    "\r\n");
  }
  Eval(absl::StrCat(
      "(() => { const dt = new DataTransfer();"
      " dt.items.add(new File([",
      Json(csv).dump(),
      "], 'inventory.csv', {type: 'text/csv'}));"
      " document.getElementById('jobfile').files = dt.files;"
      " document.getElementById('submitjob').click(); return true; })()"));
  const Json listed = WaitFor(
      "(() => { const tr = document.querySelector('#jobs tbody tr');"
      " return tr && tr.cells[1].textContent.startsWith('succeeded') &&"
      " tr.querySelector('button') ? tr.cells[0].textContent + '|' +"
      " tr.cells[2].textContent : null; })()");
  ASSERT_TRUE(listed.is_string())
      << Eval("document.getElementById('jobmsg').textContent");
  EXPECT_EQ(
      listed.get<std::string>(),
      absl::StrCat("inventory.csv| ", kRows, " of ", kRows, " (1 failed)"));
  EXPECT_TRUE(absl::StartsWith(
      Eval("document.getElementById('jobmsg').textContent").get<std::string>(),
      "Job "));
  Screenshot("jobs.png");
  Eval("document.querySelector('#jobs tbody tr button').click(), true");
  const Json href = WaitFor(
      "(() => { const a = document.getElementById('jobdownload');"
      " return a ? a.href : null; })()");
  ASSERT_TRUE(href.is_string());
  EXPECT_EQ(Eval("document.getElementById('jobdownload').download"),
            "inventory-decoded.csv");
  const Json text =
      Eval(absl::StrCat("fetch(", href.dump(), ").then((r) => r.text())"));
  ASSERT_TRUE(text.is_string());
  std::vector<std::string> lines =
      absl::StrSplit(text.get<std::string>(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), static_cast<size_t>(kRows + 1));
  EXPECT_TRUE(absl::StartsWith(lines[0], "stock,VIN,status,source,make,model"))
      << lines[0];
  for (int i = 0; i < kRows; ++i) {
    const std::vector<std::string> cols = CsvFields(lines[i + 1]);
    EXPECT_EQ(cols[0], absl::StrCat("S", i));
    EXPECT_EQ(cols[2], i == 7 ? "failed" : "done") << lines[i + 1];
  }
}

// Rule 21: an invalid VIN's row offers the snapshot's corrections ("did you
// mean"), never decoded until clicked; a click decodes the one chosen.
TEST_F(HttpPageTest, AnInvalidVinOffersItsCorrectionsAndAClickDecodesOne) {
  ServerOptions o = Defaults();
  o.snapshot_path = VIN_SNAPSHOT_PATH;
  o.engine.default_source = engine::SourcePreference::kLiveOnly;
  ASSERT_NO_FATAL_FAILURE(Open(o));
  Script(kFord, "ok");
  const std::string typo = "1FTMW1T88MFA0O001";  // an O for position 14's 0
  Eval(absl::StrCat("document.getElementById('vins').value = '", typo,
                    "'; document.getElementById('go').click(); true"));
  const Json offered = WaitFor(absl::StrCat(
      "(() => { const b = document.querySelector('tr[data-vin=\"", typo,
      "\"] button.suggestion'); return b ? b.textContent : null; })()"));
  ASSERT_TRUE(offered.is_string()) << Eval(RowText(typo));
  EXPECT_EQ(offered.get<std::string>(), kFord);
  EXPECT_TRUE(absl::StrContains(Eval(RowText(typo)).get<std::string>(),
                                std::string("did you mean ") + kFord))
      << Eval(RowText(typo));
  EXPECT_EQ(fake_->TotalRequests(), 0) << "a suggestion is not decoded unasked";
  Eval(absl::StrCat("document.querySelector('tr[data-vin=\"", typo,
                    "\"] button.suggestion').click(); true"));
  const Json done = WaitFor(
      absl::StrCat("(() => { const t = ", RowText(kFord),
                   "; return t && t.startsWith('done') ? t : null; })()"));
  ASSERT_TRUE(done.is_string()) << Eval(RowText(kFord));
  EXPECT_EQ(fake_->RequestCount(kFord), 1);
  Screenshot("suggested.png");
}

}  // namespace
}  // namespace server
