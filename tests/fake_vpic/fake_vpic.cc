// FakeVpic, the public face of the fake vPIC (fake_vpic.h), forwarding to
// its server (fake_vpic_impl.h).
#include "fake_vpic/fake_vpic.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "fake_vpic/answers.h"
#include "fake_vpic/fake_vpic_impl.h"

namespace fakevpic {

absl::StatusOr<std::unique_ptr<FakeVpic>> FakeVpic::Start(Options options) {
  absl::StatusOr<Answers> answers = Answers::Load(options.fixtures_dir, options.full_answers);
  if (!answers.ok()) return answers.status();
  auto impl = std::make_unique<Impl>(std::move(options), *std::move(answers));
  if (absl::Status s = impl->Listen(); !s.ok()) return s;
  impl->StartAccepting();
  return std::unique_ptr<FakeVpic>(new FakeVpic(std::move(impl)));
}

FakeVpic::FakeVpic(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FakeVpic::~FakeVpic() = default;

int FakeVpic::port() const { return impl_->port(); }
std::string FakeVpic::base_url() const {
  return absl::StrCat("http://", impl_->options().host, ":", impl_->port(),
                      "/api/vehicles");
}
void FakeVpic::Script(const std::string& vin, std::vector<Step> steps) {
  impl_->Script(vin, std::move(steps));
}
void FakeVpic::ScriptEveryVin(std::vector<Step> steps) {
  impl_->ScriptEveryVin(std::move(steps));
}
void FakeVpic::HoldAnswers() { impl_->Hold(true); }
void FakeVpic::ReleaseAnswers() { impl_->Hold(false); }
void FakeVpic::ScriptBatch(std::vector<Step> steps) {
  impl_->ScriptBatch(std::move(steps));
}
std::vector<RequestRecord> FakeVpic::BatchRequests() const {
  return impl_->Requests(std::nullopt, /*batches_only=*/true);
}
std::vector<RequestRecord> FakeVpic::Requests() const {
  return impl_->Requests(std::nullopt);
}
std::vector<RequestRecord> FakeVpic::RequestsFor(absl::string_view vin) const {
  return impl_->Requests(vin);
}
int FakeVpic::RequestCount(absl::string_view vin) const {
  return static_cast<int>(impl_->Requests(vin).size());
}
int FakeVpic::TotalRequests() const { return impl_->TotalRequests(); }
int FakeVpic::TotalVinsRequested() const {
  int vins = 0;
  for (const RequestRecord& r : impl_->Requests(std::nullopt)) {
    vins += r.is_batch() ? static_cast<int>(r.batch.size()) : !r.vin.empty();
  }
  return vins;
}
bool FakeVpic::WaitForRequests(int n, absl::Duration timeout) const {
  return impl_->WaitForRequests(n, timeout);
}
bool FakeVpic::WaitUntilIdle(absl::Duration timeout) const {
  return impl_->WaitUntilIdle(timeout);
}
int FakeVpic::MaxConcurrentRequests() const {
  return impl_->MaxConcurrentRequests();
}
int FakeVpic::ActiveRequests() const { return impl_->ActiveRequests(); }

}  // namespace fakevpic
